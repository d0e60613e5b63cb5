package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// boltEngine returns runner/inmem on store/bolt: a fresh file in dir for
// every run, fsync on (the default options).
func boltEngine(workers int, dir string) engine {
	return batonEngine("bolt", workers, func(sc scenario, rep int) (store.Store, func() storeStats, func() error, error) {
		path := filepath.Join(dir, fmt.Sprintf("%s-r%d.db", sc.Name, rep))
		st, err := bolt.Open(path, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		stats := func() storeStats {
			s := st.Stats()
			return storeStats{
				BytesWritten: int64(s.BytesWritten),
				PageBytes:    int64(s.PageBytes),
				WriteTxns:    int64(s.WriteTxs),
				Snapshots:    int64(s.Snapshots),
				Steps:        int64(s.Steps),
			}
		}
		done := func() error {
			err := st.Close()
			if rmErr := os.Remove(path); err == nil {
				err = rmErr
			}
			return err
		}
		return st, stats, done, nil
	})
}
