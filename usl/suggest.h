/*
 * usl/suggest.h - "did you mean": the candidate closest to a typo.
 *
 * Used for configuration errors and for names the control socket does not
 * know, so both suggest by the same rule.
 */
#ifndef USL_SUGGEST_H
#define USL_SUGGEST_H

#include <stdbool.h>

#define USL_SUGGEST_MAX_LEN	128	/* longer strings are never close */

/* Levenshtein distance, case-insensitive; UINT_MAX past USL_SUGGEST_MAX_LEN. */
unsigned usl_suggest_distance(const char *a, const char *b);

/*
 * Whether cand is close enough to be what typo meant, and closer than *best
 * (then *best becomes its distance).  Start with *best = UINT_MAX and keep
 * the last candidate for which it says true.
 */
bool usl_suggest_close(const char *typo, const char *cand, unsigned *best);

#endif
