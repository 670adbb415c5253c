package store_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/storetest"
)

func TestMemoryTaskStoreContract(t *testing.T) {
	storetest.TaskStore(t, func(*testing.T) store.TaskStore { return store.NewMemoryTaskStore(nil) })
}
