//go:build !linux

package main

func limitMallocArenas() {}
