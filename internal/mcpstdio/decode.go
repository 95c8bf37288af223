package mcpstdio

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sjson "github.com/segmentio/encoding/json"
)

// decodeLine is jsonrpc.DecodeMessage(line), without its two 32 KiB
// buffers.
//
// go-sdk decodes each message through a segmentio json.Decoder over a
// bytes.Reader, twice (the message, then its method), and each Decoder
// allocates a 32 KiB read buffer: under a stream of tool calls those
// buffers were half of every byte the server allocated (BENCHMARKS.md,
// issue 29), so the collector ran every few dozen calls. A line is already
// one value in memory, so here the same library parses it in place with
// the same flag (keys matched case-sensitively) into the same wire form,
// and builds the same Request.
//
// Only a request (a message with a method) that parses cleanly is decoded
// here; anything else (a response, an error, trailing bytes, nesting deeper
// than go-sdk allows) goes to jsonrpc.DecodeMessage itself, so every answer
// and error text stays go-sdk's. TestDecodeLineAsDecodeMessage and
// FuzzDecodeLine hold the two to the same result.
func decodeLine(line []byte) (jsonrpc.Message, error) {
	if msg, ok := decodeRequest(line); ok {
		return msg, nil
	}
	return jsonrpc.DecodeMessage(line)
}

// wireMessage is go-sdk's decode form of a message (jsonrpc2.wireDecode),
// every field kept so that a field go-sdk refuses is refused here too.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

const parseFlags = sjson.DontMatchCaseInsensitiveStructFields

func decodeRequest(line []byte) (*jsonrpc.Request, bool) {
	if tooDeep(line) {
		return nil, false
	}
	var w wireMessage
	if rest, err := sjson.Parse(line, &w, parseFlags); err != nil || len(rest) != 0 {
		return nil, false
	}
	if w.VersionTag != "2.0" || len(w.Method) == 0 {
		return nil, false
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, false
	}
	var method string
	if rest, err := sjson.Parse(w.Method, &method, parseFlags); err != nil || len(rest) != 0 {
		return nil, false
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, true
}

// maxDepth is go-sdk's bound on the nesting of a message (its
// internal/json.defaultMaxDepth).
const maxDepth = 1000

// tooDeep reports whether data nests objects and arrays deeper than
// maxDepth, counted as go-sdk counts (brackets outside strings).
func tooDeep(data []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > maxDepth {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}
