# src/proto/codec.mk: filled in by its module
