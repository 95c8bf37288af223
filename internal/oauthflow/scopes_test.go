package oauthflow

import (
	"slices"
	"testing"
)

func TestCovers(t *testing.T) {
	t.Parallel()
	const (
		labels = scopePrefix + "gmail.labels"
		insert = scopePrefix + "gmail.insert"
	)
	tests := []struct {
		granted []string
		want    string
		ok      bool
	}{
		{[]string{readonly}, readonly, true},
		{[]string{readonly}, compose, false},
		{[]string{compose}, scopeSend, true},
		{[]string{scopeSend}, compose, false},
		{[]string{scopeModify}, readonly, true},
		{[]string{scopeModify}, compose, true},
		{[]string{scopeModify}, labels, true},
		{[]string{scopeModify}, insert, true},
		{[]string{scopeModify}, scopeMeta, false},
		{[]string{readonly, compose}, scopeModify, false},
		{[]string{scopeFull}, scopeModify, true},
		{[]string{scopeModify}, scopeFull, false},
		{nil, readonly, false},
	}
	for _, tt := range tests {
		if got := Covers(tt.granted, tt.want); got != tt.ok {
			t.Errorf("Covers(%v, %s) = %v", shortScopes(tt.granted), ShortScope(tt.want), got)
		}
	}
	want := []string{readonly, compose, scopeSend, scopeModify}
	if got := Missing([]string{readonly, compose}, want); !slices.Equal(got, []string{scopeModify}) {
		t.Errorf("Missing = %v", got)
	}
	if got := Missing([]string{scopeModify}, want); got != nil {
		t.Errorf("gmail.modify alone misses %v", got)
	}
}
