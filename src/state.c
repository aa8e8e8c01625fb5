/*
 * src/state.c - the daemon's one global state (struct l2tpd, l2tpv3d.h),
 * in a file of its own: every module reads it, so it belongs to none of
 * them (main.c sets it up).
 */
#include "l2tpv3d.h"

struct l2tpd l2tpd;
