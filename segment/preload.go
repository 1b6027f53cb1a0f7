package segment

// LoadIndexes opens the segment's offset and time indexes now if they are
// not open yet (they open lazily, by file name). The log cleaner calls it on
// the segments it replaces before their names are reused by the cleaned
// segment, so that a reader still holding one of them keeps using its own
// indexes.
func (s *Segment) LoadIndexes() error {
	_, _, err := s.indexes()
	return err
}
