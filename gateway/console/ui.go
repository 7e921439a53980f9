package console

import (
	"embed"
	"io/fs"
	"net/http"
)

// uiFiles is the page: plain HTML, CSS and JavaScript, no framework and nothing fetched from
// elsewhere, so the console works offline and behind any firewall.
//
//go:embed ui
var uiFiles embed.FS

func uiHandler() http.Handler {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embedded directory is part of the build
	}
	return http.StripPrefix("/ui/", http.FileServer(http.FS(sub)))
}
