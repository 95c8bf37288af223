package localgmail

import (
	_ "golang.org/x/oauth2"
	_ "google.golang.org/api/gmail/v1"
	_ "google.golang.org/api/option"
)
