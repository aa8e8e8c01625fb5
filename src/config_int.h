/*
 * src/config_int.h - what the files of the configuration parser share
 * (config.c, config_value.c, config_table.c, config_parse.c,
 * config_print.c).  Only they include it: src/config.h is the API.
 */
#ifndef L2TPD_CONFIG_INT_H
#define L2TPD_CONFIG_INT_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

#define SETTING_PATH_MAX	96	/* "tunnels.sessions.remote_end_id" and room */
#define WHY_MAX			320

/* ---- names (config_table.c) ---- */

struct name_val {
	const char *name;
	int val;
};

const struct name_val *name_find(const struct name_val *t, const char *s);
const char *name_of(const struct name_val *t, int val);
const char *names_text(const struct name_val *t, char *buf, size_t len);

/* ---- addresses (config_value.c) ---- */

uint16_t addr_port(const struct cfg_addr *a);
void addr_set_port(struct cfg_addr *a, uint16_t port);
const char *addr_fmt(const struct cfg_addr *a, uint16_t omit_port, char *buf, size_t len);
bool addr_equal(const struct cfg_addr *a, const struct cfg_addr *b);
bool prefix_parse(const char *s, struct cfg_prefix *p, char *why, size_t wl);

/* ---- built-in defaults (config.c) ---- */

void tunnel_profile_defaults(struct tunnel_profile *tp);
void session_profile_defaults(struct session_profile *sp);
void peer_defaults(struct peer_profile *pp, bool accept);
void listen_defaults(struct l2tpd_config *c);
void hostname_default(struct l2tpd_config *c);

/* ---- parse state and errors (config.c) ---- */

/* One source file, read back to recover integer literals (see int_literal()). */
struct src_file {
	char *name;
	char *text;
	size_t len;
	size_t *line_off;	/* start of line n+1 */
	unsigned n_lines;
};

struct pctx {
	struct l2tpd_config *c;
	const char *file;
	const char *incdir;		/* directory of file: @include, include_dir, secret_file */
	char *err;
	size_t errlen;

	/* groups of the elements, index-aligned with the arrays in c (NULL: built in) */
	const config_setting_t **tp_groups, **sp_groups, **peer_groups, **tun_groups, **pool_groups;
	const config_setting_t *peer_default_group;
	const config_setting_t *listen_setting;
	bool sccrq_in_default;		/* "default" sets sccrq_max_retries itself */

	struct src_file src;
};

bool fail(struct pctx *p, const config_setting_t *s, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *rel_path(const char *incdir, const char *v, char *buf, size_t len);
const char *src_name(const struct pctx *p, const char *file, char *buf, size_t len);
const char *type_name(const config_setting_t *s);
bool has(const config_setting_t *g, const char *key);
const config_setting_t *where(const config_setting_t *g, const char *key);
const config_setting_t *where2(const config_setting_t *g, const char *k1, const char *k2);

/* ---- reading values (config_value.c) ---- */

bool get_int(struct pctx *p, const config_setting_t *s, const char *path,
	     const char *valid, long long *v);
const char *secs_fmt(long long ms, char *buf, size_t len);

/* ---- option tables (config_value.c) ---- */

enum opt_kind {
	OPT_BOOL,		/* bool */
	OPT_UINT,		/* uint8/16/32_t (size from the table) */
	OPT_TIME,		/* seconds (int or float) in the file, uint32_t ms in the struct */
	OPT_STR,		/* char[size]; names: one of these words */
	OPT_ENUM,		/* a word from names, stored as its value (enum or uint16_t) */
	OPT_SPECIAL,		/* its own parse and print */
};

struct opt;
typedef bool (*parse_fn)(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
			 const struct opt *o);
typedef void (*print_fn)(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);
/* true when s is acceptable; otherwise writes the reason into why. */
typedef bool (*check_fn)(const char *s, char *why, size_t wl);

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off, size;
	long long min, max;		/* UINT: values; TIME: milliseconds */
	const char *zero;		/* 0 accepted besides min..max; what it means */
	size_t off2;			/* secret, secret_file: the other one's field */
	const int *set;			/* UINT: only these values (terminated by -1) */
	const struct name_val *names;	/* ENUM, STR */
	check_fn check;			/* STR */
	bool required;
	parse_fn parse;			/* instead of the generic parse */
	print_fn print;			/* instead of the generic print */
};

void *field(void *obj, const struct opt *o);
const void *cfield(const void *obj, const struct opt *o);
unsigned long long load_uint(const void *src, size_t size);
bool parse_string(struct pctx *p, const config_setting_t *s, const char *path,
		  const char *valid, const char **v);
bool parse_opt(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
	       const struct opt *o);
const struct opt *opt_find(const struct opt *opts, const char *name);

/* ---- checks of string values (config_table.c) ---- */

bool check_name(const char *s, char *why, size_t wl);
bool check_printable(const char *s, char *why, size_t wl);

/* ---- secret, secret_file (config_table.c) ---- */

bool parse_secret(struct pctx *p, const config_setting_t *s, void *obj, const char *path,
		  const struct opt *o);

/* ---- the tables (config_table.c) ---- */

extern const struct opt global_opts[];
extern const struct opt tunnel_profile_opts[];
extern const struct opt session_profile_opts[];
extern const struct opt peer_opts[];
extern const struct opt peer_default_opts[];
extern const struct opt match_opts[];
extern const struct opt tunnel_opts[];
extern const struct opt pool_opts[];
extern const struct opt member_opts[];
extern const struct opt session_opts[];
extern const struct opt hook_opts[];
extern const struct opt snmp_opts[];

/* ---- groups and lists (config_parse.c) ---- */

bool parse_sessions(struct pctx *p, const config_setting_t *s, void *obj,
		    const char *path, const struct opt *o);
bool parse_peer_sessions(struct pctx *p, const config_setting_t *s, void *obj,
			 const char *path, const struct opt *o);
bool parse_pool_members(struct pctx *p, const config_setting_t *s, void *obj,
			const char *path, const struct opt *o);

/* ---- whole file (config_parse.c) ---- */

bool parse_root(struct pctx *p, const config_setting_t *const *roots, unsigned nr);

/* ---- printing (config_print.c) ---- */

void print_str(FILE *f, const char *s);
extern bool print_secrets;
void print_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);
void print_peer_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);
void print_pool_members(FILE *f, const struct l2tpd_config *c, const void *obj, int ind);

#endif
