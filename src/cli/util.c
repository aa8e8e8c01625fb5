/*
 * src/cli/util.c - what every part of l2tpv3ctl uses: diagnostics, memory
 * that cannot fail, clocks and the exit status of a reply.  It depends on
 * nothing else of the CLI, so parse.c, conn.c, batch.c and l2tpv3ctl.c all
 * sit above it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ctl_proto.h"

void cli_warnx(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);		/* keep diagnostics after the output they follow */
	fputs(CLI_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		cli_warnx("out of memory");
		exit(EXIT_FAIL);
	}
	return p;
}

void *xmalloc(size_t n)
{
	return xrealloc(NULL, n);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 2 for invalid-argument, like a client-side parse error: the user must fix the command. */
int exit_status(int status)
{
	if (status == CTL_OK)
		return 0;
	return status == CTL_E_INVALID ? EXIT_USAGE : EXIT_FAIL;
}
