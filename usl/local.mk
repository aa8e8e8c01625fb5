# usl/local.mk: filled in by its module
