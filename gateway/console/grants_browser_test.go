package console_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// The console in Chromium as a principal limited to work-*: it sees and acts only there.
func TestConsoleInChromiumAsALimitedPrincipal(t *testing.T) {
	b := browser(t)
	store := memory.New(memory.Options{})
	t.Cleanup(func() { _ = store.Close() })
	access, err := gateway.NewAccess(gateway.AccessConfig{Principals: []gateway.Principal{{
		Name: "team", TokenHashes: [][32]byte{gateway.HashToken("team-token")},
		Grants: []gateway.TubeGrant{{Tubes: []string{"work-*"}, Allow: gateway.GrantInspect | gateway.GrantManage}},
	}}})
	require.NoError(t, err)
	_, srv := gatewaytest.StartServer(t, store, gateway.Config{Access: access})
	url := gatewaytest.ServeConsole(t, srv, store, "memory")

	var ids []uint64
	for _, tube := range []string{"work-a", "work-a", "work-a", "other", "other"} {
		id, err := store.Put(context.Background(), backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("job in " + tube)})
		require.NoError(t, err)
		ids = append(ids, id)
	}

	page := tab(t, b, map[string]any{"Authorization": "Bearer team-token"})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(url+"/ui/"),
		cellIs(`tr[data-tube="work-a"] .ready`, "3"),
		until(`!document.querySelector('tr[data-tube="other"]')`),
		cellIs(`#whoami`, "as team"),
		until(`document.querySelector('#whoami').title === "inspect, manage on work-*"`)))

	// Acts in work-a: delete a job from its row.
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(url+"/ui/#/tube/work-a"),
		until(`document.querySelectorAll('#jobs tbody tr').length === 3`),
		chromedp.Click(fmt.Sprintf(`button.delete-job[data-id="%d"]`, ids[0])),
		chromedp.WaitVisible("#confirm-yes"), chromedp.Click("#confirm-yes"),
		until(fmt.Sprintf(`!document.querySelector('tr[data-id="%d"]')`, ids[0]))))
	_, err = store.Peek(context.Background(), ids[0])
	require.ErrorIs(t, err, backend.ErrNotFound)

	// Another tube's page shows no job, only the refusal; its jobs stay.
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(url+"/ui/#/tube/other"),
		until(`document.querySelector('#msg') && document.querySelector('#msg').textContent.includes('not allowed')`),
		until(`document.querySelectorAll('#jobs tbody tr').length === 0`)))
	for _, id := range ids[3:] {
		_, err := store.Peek(context.Background(), id)
		require.NoError(t, err)
	}
}
