# src/proto/engine.mk: filled in by its module
