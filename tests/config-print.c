/*
 * tests/config-print.c - loads a configuration file and prints it
 * normalised (config_print()), or the error: what `l2tpv3d -nv` does,
 * without the daemon, for tests/config-golden.sh.
 *
 *	config-print FILE	normalised config on stdout, exit 0;
 *				the error on stderr, exit 1
 *	config-print -d		the built-in defaults
 *	config-print -c FILE	what a restart carries to the next process
 *				(config_carry_text(): secrets and secret_file
 *				contents in it), exit 0; the error as above
 *	config-print -V NAME	a build/host value the golden files leave
 *				out: hostname, runstatedir; snmp: yes when
 *				built with it (snmp.enabled = true is
 *				refused otherwise)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/config.h"

#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

static int usage(void)
{
	fprintf(stderr, "usage: config-print FILE | -c FILE | -d | -V hostname|runstatedir|snmp\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct l2tpd_config *c;
	char err[1024];

	if (argc == 3 && strcmp(argv[1], "-V") == 0) {
		if (strcmp(argv[2], "runstatedir") == 0) {
			printf("%s\n", RUNSTATEDIR);
			return 0;
		}
		if (strcmp(argv[2], "snmp") == 0) {
#ifdef HAVE_SNMP
			puts("yes");
#else
			puts("no");
#endif
			return 0;
		}
		if (strcmp(argv[2], "hostname") != 0)
			return usage();
		c = config_defaults();
		if (!c)
			return 1;
		printf("%s\n", c->hostname);
		config_free(c);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "-c") == 0) {
		size_t len;
		char *text;

		c = config_load(argv[2], err, sizeof(err));
		if (!c) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		text = config_carry_text(c, &len);
		config_free(c);
		if (!text || fwrite(text, 1, len, stdout) != len)
			return 1;
		free(text);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (argc != 2)
		return usage();
	if (strcmp(argv[1], "-d") == 0) {
		c = config_defaults();
	} else {
		c = config_load(argv[1], err, sizeof(err));
		if (!c) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
	}
	if (!c)
		return 1;
	config_print(c, stdout);
	config_free(c);
	return fflush(stdout) == 0 ? 0 : 1;
}
