/*
 * usl/suggest.c - "did you mean" by edit distance (names are short).
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "usl/suggest.h"

unsigned usl_suggest_distance(const char *a, const char *b)
{
	unsigned row[USL_SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > USL_SUGGEST_MAX_LEN || lb > USL_SUGGEST_MAX_LEN)
		return UINT_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (tolower((unsigned char)a[i - 1]) !=
						tolower((unsigned char)b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* Two edits, or a third of the candidate, and never all of it. */
bool usl_suggest_close(const char *typo, const char *cand, unsigned *best)
{
	unsigned d = usl_suggest_distance(typo, cand);
	size_t l = strlen(cand);

	if (d >= *best || !(d <= 2 || d * 3 <= l) || d >= l)
		return false;
	*best = d;
	return true;
}
