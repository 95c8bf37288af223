package agentmail

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// Generated names are an adjective and a noun in CamelCase ("GreenCastle"):
// easy for people and models to read, say and tell apart. 62 × 69 = 4,278
// combinations per project, as in the reference.
var (
	adjectives = []string{
		"Red", "Orange", "Yellow", "Green", "Blue", "Purple", "Pink", "Brown", "Black", "White",
		"Gray", "Silver", "Golden", "Amber", "Azure", "Crimson", "Cyan", "Indigo", "Jade", "Lilac",
		"Magenta", "Maroon", "Olive", "Scarlet", "Teal", "Violet", "Chartreuse", "Coral", "Ivory", "Ruby",
		"Sapphire", "Emerald", "Bright", "Calm", "Clever", "Bold", "Brave", "Gentle", "Happy", "Lucky",
		"Mighty", "Noble", "Quiet", "Quick", "Rapid", "Silent", "Swift", "Stormy", "Sunny", "Misty",
		"Frosty", "Rusty", "Dusty", "Wild", "Wise", "Proud", "Keen", "Merry", "Lively", "Cosmic",
		"Fuzzy", "Polar",
	}
	nouns = []string{
		"Lake", "Castle", "Fox", "Bear", "Stone", "Mountain", "Forest", "Dog", "Creek", "Peak",
		"Glacier", "River", "Valley", "Meadow", "Canyon", "Cliff", "Desert", "Island", "Harbor", "Ocean",
		"Pond", "Ridge", "Brook", "Bridge", "Tower", "Falcon", "Hawk", "Eagle", "Owl", "Wolf",
		"Otter", "Beaver", "Badger", "Heron", "Raven", "Sparrow", "Finch", "Lynx", "Moose", "Elk",
		"Deer", "Hare", "Salmon", "Trout", "Whale", "Dolphin", "Panda", "Tiger", "Lion", "Cat",
		"Oak", "Pine", "Willow", "Maple", "Cedar", "Birch", "Fern", "Cloud", "Star", "Comet",
		"Moon", "Snow", "Hill", "Field", "Garden", "Orchard", "Cave", "Reef", "Dune",
	}
)

func defaultRand(n int) int { return rand.IntN(n) }

// GenerateName picks an adjective+noun name not in taken (keys lower-case).
// It tries random picks first, then walks every combination from a random
// start, and only when all 4,278 are used appends a number.
func GenerateName(taken map[string]bool, rnd func(int) int) string {
	if rnd == nil {
		rnd = defaultRand
	}
	total := len(adjectives) * len(nouns)
	name := func(i int) string { return adjectives[i/len(nouns)] + nouns[i%len(nouns)] }
	for range 32 {
		if n := name(rnd(total)); !taken[strings.ToLower(n)] {
			return n
		}
	}
	start := rnd(total)
	for k := range total {
		if n := name((start + k) % total); !taken[strings.ToLower(n)] {
			return n
		}
	}
	for suffix := 2; ; suffix++ {
		if n := name(rnd(total)) + strconv.Itoa(suffix); !taken[strings.ToLower(n)] {
			return n
		}
	}
}

var (
	// wordName is a CamelCase-style identity: letters then letters/digits.
	wordName = lazyRegexp(`^[A-Za-z][A-Za-z0-9]{1,63}$`)
	// explicitID is a stable identifier such as "backend-1" or "ci.bot"
	// (the reference's explicit ids): it must contain one of - _ .
	explicitID = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	modelLike  = lazyRegexp(`^(gpt|o[1-9]|claude|opus|sonnet|haiku|gemini|llama|mistral|mixtral|qwen|deepseek|grok|codestral)([-._]?[a-z0-9]+)*$`)

	programNames = map[string]bool{
		"claude": true, "claude-code": true, "claudecode": true, "codex": true, "codex-cli": true, "codexcli": true,
		"gemini-cli": true, "geminicli": true, "cursor": true, "copilot": true, "aider": true, "windsurf": true,
		"cline": true, "opencode": true, "amp": true, "goose": true, "continue": true, "zed": true, "roo": true,
	}
	broadcastNames = map[string]bool{
		"all": true, "everyone": true, "everybody": true, "broadcast": true, "here": true, "channel": true,
		"team": true, "agents": true, "*": true, "any": true, "anyone": true,
	}
	unixUsers = map[string]bool{
		"root": true, "admin": true, "administrator": true, "user": true, "ubuntu": true, "ec2-user": true,
		"nobody": true, "daemon": true, "guest": true,
	}
)

// NameProblem explains why name cannot identify an agent, or returns "" when
// it can. Any CamelCase word (GreenCastle, ManagerMoose) or explicit id with
// - _ or . (backend-1) is valid; program and model names, e-mail addresses,
// broadcast words and unix user names are not, because agents confuse them
// with their identity and then collide with one another.
func NameProblem(name string) string {
	lower := strings.ToLower(name)
	switch {
	case name == "":
		return "the name is empty"
	case strings.ContainsAny(name, " \t\r\n"):
		return "it contains spaces (use CamelCase, like GreenCastle)"
	case strings.Contains(name, "@"):
		return "it looks like an e-mail address, not an agent identity"
	case broadcastNames[lower]:
		return "it addresses everyone; agent names identify one agent"
	case programNames[lower]:
		return "it is a program name (pass it as program)"
	case modelLike().MatchString(lower):
		return "it is a model name (pass it as model)"
	case unixUsers[lower]:
		return "it looks like a unix user name"
	case wordName().MatchString(name):
		return ""
	case explicitID().MatchString(name) && strings.ContainsAny(name, "-_."):
		return ""
	}
	return "use 2–64 letters and digits starting with a letter (like GreenCastle), or an id with - _ or . (like backend-1)"
}

// The overview's naming rule, which strict mode enforces for new names
// (coerce generates names that follow it): an agent name is an adjective and a noun of the lists above, in
// CamelCase ("GreenCastle"), optionally followed by the number GenerateName
// adds once every pair is taken ("GreenCastle2").
// Built on first use, not at every start.
var (
	adjectiveByLower = sync.OnceValue(func() map[string]string { return lowerIndex(adjectives) })
	nounByLower      = sync.OnceValue(func() map[string]string { return lowerIndex(nouns) })
)

func lowerIndex(words []string) map[string]string {
	m := make(map[string]string, len(words))
	for _, w := range words {
		m[strings.ToLower(w)] = w
	}
	return m
}

// AdjectiveNounName returns name in its canonical CamelCase form when it
// is an adjective+noun name (matched case-insensitively: "greencastle" is
// GreenCastle), and false when it is not one.
func AdjectiveNounName(name string) (string, bool) {
	lower := strings.ToLower(name)
	digits := len(lower)
	for digits > 0 && lower[digits-1] >= '0' && lower[digits-1] <= '9' {
		digits--
	}
	words, suffix := lower[:digits], name[digits:]
	if suffix != "" && (suffix[0] == '0' || len(suffix) > 6) {
		return "", false
	}
	for i := 1; i < len(words); i++ {
		adj, ok := adjectiveByLower()[words[:i]]
		if !ok {
			continue
		}
		if noun, ok := nounByLower()[words[i:]]; ok {
			return adj + noun + suffix, true
		}
	}
	return "", false
}

// RequestedNameProblem applies strict mode's rule to a requested new name: it
// returns the name to use (canonical CamelCase) or, when the name cannot
// be used, why. A name NameProblem refuses keeps that reason; any other
// name that is not adjective+noun (ManagerMoose, backend-1) is refused
// because the overview's names are.
func RequestedNameProblem(name string) (canonical, problem string) {
	if problem := NameProblem(name); problem != "" {
		return "", problem
	}
	if c, ok := AdjectiveNounName(name); ok {
		return c, ""
	}
	return "", "agent names are an adjective and a noun in CamelCase, like GreenCastle or SwiftFox (" +
		strconv.Itoa(len(adjectives)) + " adjectives × " + strconv.Itoa(len(nouns)) + " nouns)"
}
