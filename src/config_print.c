/*
 * src/config_print.c - the configuration printed back (config_print()): every
 * setting with the value in effect, by walking the tables that parse it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"

/* ---- printing ---- */

/* A libconfig string literal: quotes, backslashes and control characters escaped. */
void print_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '"':	fputs("\\\"", f); break;
		case '\\':	fputs("\\\\", f); break;
		case '\n':	fputs("\\n", f); break;
		case '\t':	fputs("\\t", f); break;
		case '\r':	fputs("\\r", f); break;
		case '\f':	fputs("\\f", f); break;
		default:
			if (ch < 0x20 || ch == 0x7f)
				fprintf(f, "\\x%02x", ch);
			else
				fputc(ch, f);
		}
	}
	fputc('"', f);
}

bool print_secrets;

static void print_value(FILE *f, const struct l2tpd_config *c, const struct opt *o,
			const void *obj, int ind)
{
	const void *fp = cfield(obj, o);
	unsigned long long v;
	char buf[32];
	bool b;

	if (o->print) {
		o->print(f, c, obj, ind);
		return;
	}
	switch (o->kind) {
	case OPT_BOOL:
		memcpy(&b, fp, sizeof(b));
		fputs(b ? "true" : "false", f);
		break;
	case OPT_UINT:
		v = load_uint(fp, o->size);
		fprintf(f, "%llu%s", v, v > INT32_MAX ? "L" : "");
		break;
	case OPT_TIME:
		fputs(secs_fmt((long long)load_uint(fp, 4), buf, sizeof(buf)), f);
		break;
	case OPT_STR:
		/* -nv output lands in tickets and chats: secrets only when asked, a file's never */
		if (o->parse == parse_secret && *((const char *)obj + o->off2))
			print_str(f, "");
		else
			print_str(f, o->parse == parse_secret && !print_secrets &&
				  *(const char *)fp ? "********" : fp);
		break;
	case OPT_ENUM: {
		const char *n = name_of(o->names, (int)load_uint(fp, o->size));

		print_str(f, n ? n : "unknown");
		break;
	}
	case OPT_SPECIAL:
		break;
	}
}

void config_print_secrets(bool show)
{
	print_secrets = show;
}

static void print_group(FILE *f, const struct l2tpd_config *c, const struct opt *opts,
			const void *obj, int ind)
{
	for (; opts->name; opts++) {
		fprintf(f, "%*s%s = ", ind, "", opts->name);
		print_value(f, c, opts, obj, ind);
		fputs(";\n", f);
	}
}

/* "( {...}, {...} )" with the closing parenthesis at ind. */
static void print_list(FILE *f, const struct l2tpd_config *c, const struct opt *opts,
		       const void *arr, size_t size, unsigned n, int ind)
{
	unsigned i;

	if (!n) {
		fputs("( )", f);
		return;
	}
	fputs("(\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%*s{\n", ind + 2, "");
		print_group(f, c, opts, (const char *)arr + i * size, ind + 4);
		fprintf(f, "%*s}%s\n", ind + 2, "", i + 1 < n ? "," : "");
	}
	fprintf(f, "%*s)", ind, "");
}

void print_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct static_tunnel *t = obj;

	print_list(f, c, session_opts, t->sessions, sizeof(*t->sessions), t->n_sessions, ind);
}

void print_peer_sessions(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct peer_profile *pp = obj;

	print_list(f, c, match_opts, pp->sessions, sizeof(*pp->sessions), pp->n_sessions, ind);
}

void print_pool_members(FILE *f, const struct l2tpd_config *c, const void *obj, int ind)
{
	const struct lns_pool *lp = obj;

	print_list(f, c, member_opts, lp->members, sizeof(*lp->members), lp->n_members, ind);
}

void config_print(const struct l2tpd_config *c, FILE *out)
{
	fputs("# l2tpv3d configuration, normalised: every setting with the value in effect\n"
	      "# (defaults filled in, profiles expanded, include_dir's files merged,\n"
	      "# times in seconds).\n\n", out);
	fputs("global = {\n", out);
	print_group(out, c, global_opts, c, 2);
	fputs("};\n\ntunnel_profiles = ", out);
	print_list(out, c, tunnel_profile_opts, c->tunnel_profiles, sizeof(*c->tunnel_profiles),
		   c->n_tunnel_profiles, 0);
	fputs(";\n\nsession_profiles = ", out);
	print_list(out, c, session_profile_opts, c->session_profiles,
		   sizeof(*c->session_profiles), c->n_session_profiles, 0);
	fputs(";\n\npeers = ", out);
	print_list(out, c, peer_opts, c->peers, sizeof(*c->peers), c->n_peers, 0);
	fputs(";\n\npeer_default = {\n", out);
	print_group(out, c, peer_default_opts, &c->peer_default, 2);
	fputs("};\n\nlns_pools = ", out);
	print_list(out, c, pool_opts, c->lns_pools, sizeof(*c->lns_pools), c->n_lns_pools, 0);
	fputs(";\n\ntunnels = ", out);
	print_list(out, c, tunnel_opts, c->tunnels, sizeof(*c->tunnels), c->n_tunnels, 0);
	fputs(";\n\nhooks = {\n", out);
	print_group(out, c, hook_opts, &c->hooks, 2);
	fputs("};\n\nsnmp = {\n", out);
	print_group(out, c, snmp_opts, &c->snmp, 2);
	fputs("};\n", out);
}
