package ctl

import "github.com/spf13/cobra"

// commands are ctl's commands, in the order its help lists them.
func commands(o *options) []*cobra.Command {
	return []*cobra.Command{statsCmd(o), tubesCmd(o), topCmd(o), peekCmd(o), putCmd(o), kickCmd(o),
		deleteCmd(o), pauseCmd(o), flushCmd(o), moveCmd(o), listCmd(o), jobCmd(o), policyCmd(o),
		scheduleCmd(o), whoamiCmd(o), hashPasswordCmd(o)}
}

// CommandNames are ctl's command names, for the server's help to list.
func CommandNames() []string {
	var names []string
	for _, c := range commands(&options{}) {
		names = append(names, c.Name())
	}
	return names
}
