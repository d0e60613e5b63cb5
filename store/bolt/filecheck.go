package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"

	berrors "go.etcd.io/bbolt/errors"
)

// What checkFile knows of bbolt's file format (version 2, as written by
// go.etcd.io/bbolt v1.x; see its internal/common package). Every page
// starts with a 16-byte header: the page id (8 bytes), flags (2), an
// element count (2) and the number of overflow pages that follow it (4).
// Pages 0 and 1 are meta pages, and bbolt uses the valid one with the
// higher transaction id. After the header a meta page holds, in the
// machine's byte order: magic (4), version (4), page size (4), flags (4),
// the root bucket (its root page 8, its sequence 8), the free list's page
// (8), the high-water page id (8: pages at and above it are not in use),
// the transaction id (8), and an FNV-1a 64 checksum of the 56 bytes before
// it. A free list page's elements are the free page ids (8 bytes each);
// when the count is 0xFFFF the real count is the first of them.
const (
	pageHeaderSize = 16
	metaSize       = 64
	metaSumOffset  = 56
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)

	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10

	minPageSize = 1 << 10
	maxPageSize = 1 << 24 // the largest bbolt looks for
)

// fileMeta is what a valid meta page records.
type fileMeta struct {
	page     int    // which meta page, 0 or 1
	pageSize uint64 // bytes
	root     uint64 // page of the root bucket's root
	freelist uint64 // page of the free list, or noFreelist
	hwm      uint64 // high-water page id
	txid     uint64
}

// readMetaPage decodes the meta record of the page at off, or says why it
// is not a valid one.
func readMetaPage(f *os.File, off int64, page int) (fileMeta, error) {
	var b [pageHeaderSize + metaSize]byte
	if n, err := f.ReadAt(b[:], off); n < len(b) {
		if err == io.EOF {
			return fileMeta{}, fmt.Errorf("page %d is truncated", page)
		}
		return fileMeta{}, fmt.Errorf("reading page %d: %w", page, err)
	}
	m := b[pageHeaderSize:]
	ne := binary.NativeEndian
	switch {
	case ne.Uint32(m[0:]) != boltMagic:
		return fileMeta{}, fmt.Errorf("page %d has no bbolt magic number", page)
	case ne.Uint32(m[4:]) != boltVersion:
		return fileMeta{}, fmt.Errorf("page %d has bbolt format version %d, want %d: %w", page, ne.Uint32(m[4:]), boltVersion, berrors.ErrVersionMismatch)
	}
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	if h.Sum64() != ne.Uint64(m[metaSumOffset:]) {
		return fileMeta{}, fmt.Errorf("page %d fails its checksum", page)
	}
	return fileMeta{
		page:     page,
		pageSize: uint64(ne.Uint32(m[8:])),
		root:     ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]),
		hwm:      ne.Uint64(m[40:]),
		txid:     ne.Uint64(m[48:]),
	}, nil
}

// errNoMeta marks a file in which neither meta page is valid: not a bbolt
// database, or a damaged one.
var errNoMeta = errors.New("neither meta page is valid")

// checkFile checks, reading the file f of size bytes with ReadAt (not
// through a memory map, so a damaged file cannot fault), that the meta
// page bbolt would use agrees with the file: a page size bbolt can have,
// no page in use past the end of the file, a root page that is a B+tree
// page, and, if freelist, a free list whose pages are in range and listed
// once. These are the damages (a truncated file above all) that make bbolt
// fault or panic, or, for the free list, write over pages in use. It
// returns a *damageError; errNoMeta wrapped if no meta page is valid; or,
// for a bbolt file of another format version, bbolt's ErrVersionMismatch.
func checkFile(f *os.File, size int64, freelist bool) (fileMeta, error) {
	m0, err0 := readMetaPage(f, 0, 0)
	var pageSize uint64
	if err0 == nil {
		pageSize = m0.pageSize
	} else {
		// Find the second meta page as bbolt does, by trying each page
		// size; the one it holds must be the page size it is at.
		for ps := int64(minPageSize); ps <= maxPageSize && ps < size; ps *= 2 {
			if m, err := readMetaPage(f, ps, 1); err == nil && int64(m.pageSize) == ps {
				pageSize = m.pageSize
				break
			}
		}
		if pageSize == 0 {
			if errors.Is(err0, berrors.ErrVersionMismatch) {
				return fileMeta{}, err0
			}
			return fileMeta{}, fmt.Errorf("%w (%v, and no valid second one was found)", errNoMeta, err0)
		}
	}
	if pageSize < minPageSize || pageSize > maxPageSize || pageSize&(pageSize-1) != 0 {
		return fileMeta{}, damagef("meta page 0 records a page size of %d bytes", pageSize)
	}
	m1, err1 := readMetaPage(f, int64(pageSize), 1)
	var m fileMeta
	switch {
	case err0 == nil && err1 == nil:
		if m0.pageSize != m1.pageSize {
			return fileMeta{}, damagef("the meta pages record page sizes of %d and %d bytes", m0.pageSize, m1.pageSize)
		}
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case err0 == nil:
		m = m0
	case err1 == nil:
		m = m1
	case errors.Is(err0, berrors.ErrVersionMismatch):
		return fileMeta{}, err0 // a bbolt file of another format, not a damaged one
	default:
		return fileMeta{}, fmt.Errorf("%w (%v; %v)", errNoMeta, err0, err1)
	}
	ps := m.pageSize
	pages := uint64(size) / ps // whole pages in the file
	switch {
	case m.hwm > pages:
		return fileMeta{}, damagef("meta page %d (transaction %d) records %d pages of %d bytes, but the file has %d bytes (%d pages): it is truncated", m.page, m.txid, m.hwm, ps, size, pages)
	case m.hwm < 3 || m.root < 2 || m.root >= m.hwm:
		return fileMeta{}, damagef("meta page %d records root page %d and %d pages in use", m.page, m.root, m.hwm)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.hwm):
		return fileMeta{}, damagef("meta page %d records free list page %d and %d pages in use", m.page, m.freelist, m.hwm)
	}
	root, err := readPageHeader(f, m.root, ps)
	if err != nil {
		return fileMeta{}, err
	}
	if root.flags != branchPageFlag && root.flags != leafPageFlag || root.id != m.root || m.root+root.overflow >= m.hwm {
		return fileMeta{}, damagef("page %d, the root bucket's root, is not a B+tree page in range (id %d, flags %#x, %d overflow pages)", m.root, root.id, root.flags, root.overflow)
	}
	if freelist && m.freelist != noFreelist {
		if err := checkFreelist(f, m); err != nil {
			return fileMeta{}, err
		}
	}
	return m, nil
}

type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint64
}

func readPageHeader(f *os.File, id, pageSize uint64) (pageHeader, error) {
	var b [pageHeaderSize]byte
	if _, err := f.ReadAt(b[:], int64(id*pageSize)); err != nil {
		return pageHeader{}, damagef("reading the header of page %d: %v", id, err)
	}
	ne := binary.NativeEndian
	return pageHeader{id: ne.Uint64(b[0:]), flags: ne.Uint16(b[8:]), count: ne.Uint16(b[10:]), overflow: uint64(ne.Uint32(b[12:]))}, nil
}

// checkFreelist checks the free list that a writer loads: its pages are
// in range, and it lists each page at most once, and only pages that are
// neither meta pages, nor the free list's own, nor the root, nor past the
// high-water mark. bbolt checks none of this, and would hand out such a
// page to a write transaction, overwriting data in use.
func checkFreelist(f *os.File, m fileMeta) error {
	ps := m.pageSize
	h, err := readPageHeader(f, m.freelist, ps)
	if err != nil {
		return err
	}
	if h.flags != freelistPageFlag || h.id != m.freelist || m.freelist+h.overflow >= m.hwm {
		return damagef("page %d, the free list, is not a free list page in range (id %d, flags %#x, %d overflow pages)", m.freelist, h.id, h.flags, h.overflow)
	}
	buf := make([]byte, (h.overflow+1)*ps-pageHeaderSize)
	if _, err := f.ReadAt(buf, int64(m.freelist*ps+pageHeaderSize)); err != nil {
		return damagef("reading the free list: %v", err)
	}
	ne := binary.NativeEndian
	count, first := uint64(h.count), uint64(0)
	if h.count == 0xFFFF {
		count, first = ne.Uint64(buf), 1
	}
	if count > uint64(len(buf))/8-first {
		return damagef("the free list on page %d claims %d pages, more than it has room for", m.freelist, count)
	}
	ids := make([]uint64, count)
	for i := range ids {
		ids[i] = ne.Uint64(buf[(first+uint64(i))*8:])
	}
	slices.Sort(ids)
	for i, id := range ids {
		switch {
		case id < 2 || id >= m.hwm:
			return damagef("the free list on page %d lists page %d; pages in use are 2 to %d", m.freelist, id, m.hwm-1)
		case i > 0 && ids[i-1] == id:
			return damagef("the free list on page %d lists page %d twice", m.freelist, id)
		case id == m.root || id >= m.freelist && id <= m.freelist+h.overflow:
			return damagef("the free list on page %d lists page %d, which is in use", m.freelist, id)
		}
	}
	return nil
}
