package server

// TextShapeHits is the number of text statements the fast path recognised
// by their token key, without parsing them.
func (s *Server) TextShapeHits() int64 { return s.fast.shapeHits.Load() }
