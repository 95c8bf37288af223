package mcpstdio

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// encodeLine is msg as one line of the stream, its newline included.
//
// A successful response is framed here, not by jsonrpc.EncodeMessage: its
// result is JSON go-sdk has just encoded (and compacted), and EncodeMessage
// would validate and copy all of it once more (encoding/json compacts every
// json.RawMessage it marshals), which was a pass over the whole answer,
// tool results' text and structuredContent included, on every call. The
// bytes are the same as EncodeMessage's (TestEncodeLineAsEncodeMessage).
// Anything else (requests, notifications, errors) goes through
// EncodeMessage.
func encodeLine(msg jsonrpc.Message) ([]byte, error) {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil && len(r.Result) > 0 && r.ID.IsValid() {
		id, err := encodeID(r.ID)
		if err != nil {
			return nil, err
		}
		const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
		line := make([]byte, 0, len(head)+len(id)+len(mid)+len(r.Result)+2)
		line = append(append(append(append(line, head...), id...), mid...), r.Result...)
		return append(line, '}', '\n'), nil
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// encodeID is id as EncodeMessage writes it (strings without HTML escaping).
func encodeID(id jsonrpc.ID) ([]byte, error) {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(nil, v, 10), nil
	default:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimRight(b.Bytes(), "\n"), nil
	}
}
