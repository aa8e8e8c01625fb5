/*
 * tests/unit/check_config.c - the configuration parser: defaults, good and
 * bad files (every error names FILE:LINE, the setting and the reason),
 * profile inheritance, peer matching, addresses, and print -> load -> print
 * being a fixed point.
 *
 * Built twice (src/config.mk): check_config with this build's defines, and
 * check_config_nosnmp with HAVE_SNMP undefined, so that a parser without
 * the subagent, which must refuse snmp.enabled = true, is tested in every
 * build.
 */
#include <arpa/inet.h>
#include <check.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/config.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

/* What snmp.enabled = true gives: set with SNMP built in, refused without. */
#ifdef HAVE_SNMP
#define SNMP_ON_TEXT "true"
#else
#define SNMP_ON_TEXT "false"
#endif

/* ---- helpers ---- */

struct tmpconf {
	char path[64];
};

/* Writes text to a new temporary file. */
static void conf_write(struct tmpconf *t, const char *text)
{
	FILE *f;
	int fd;

	snprintf(t->path, sizeof(t->path), "/tmp/check_config.XXXXXX");
	fd = mkstemp(t->path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static struct l2tpd_config *load_text(const char *text, char *err, size_t errlen,
				      struct tmpconf *t)
{
	struct l2tpd_config *c;

	conf_write(t, text);
	c = config_load(t->path, err, errlen);
	return c;
}

/* Loads text that must be valid. */
static struct l2tpd_config *load_ok(const char *text)
{
	struct tmpconf t;
	char err[1024] = "";
	struct l2tpd_config *c = load_text(text, err, sizeof(err), &t);

	unlink(t.path);
	ck_assert_msg(c != NULL, "config rejected: %s\n--- config:\n%s", err, text);
	return c;
}

/* config_print() into a malloc'd string. */
static char *print_str(const struct l2tpd_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	config_print(c, f);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* load -> print -> load -> print gives the same text twice. */
static void assert_fixed_point(const struct l2tpd_config *c)
{
	char *one = print_str(c), *two;
	struct l2tpd_config *again = load_ok(one);

	two = print_str(again);
	ck_assert_str_eq(one, two);
	free(one);
	free(two);
	config_free(again);
}

static const char *example_path(char *buf, size_t len)
{
	const char *top = getenv("top_srcdir");

	snprintf(buf, len, "%s/etc/l2tpv3d.conf", top && *top ? top : TOP_SRCDIR);
	return buf;
}

static struct sockaddr_storage sa(const char *s)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(s, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, s, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, s, &s4->sin_addr), 1);
	}
	return ss;
}

/* A config that sets every section, with lists of more than one element. */
static const char full_conf[] =
	"global = {\n"
	"  listen = [\"192.0.2.1\", \"[2001:DB8::1]\"];\n"
	"  udp_port = 1701; listen_ip = true; event_loop = \"poll\"; hostname = \"lns1\";\n"
	"  router_id = \"192.0.2.1\"; secret = \"q\\\"uote\\\\back\\nnl\\x01\";\n"
	"  max_tunnels = 3000000000; max_sessions = 4294967295L; max_sessions_per_tunnel = 10;\n"
	"  max_half_open = 50; reserved_tunnels = 100; snmp_config_id = true;\n"
	"  ctl_socket = \"/tmp/x.ctl\";\n"
	"  ctl_group = \"l2tp\"; log_level = \"debug\"; dataplane = \"null\"; state_dir = \"/tmp/st\";\n"
	"};\n"
	"tunnel_profiles = (\n"
	"  { name = \"fast\"; hello_interval = 5; retransmit_initial = 0.25; retransmit_cap = 2;\n"
	"    max_retries = 4; delayed_ack = 0; },\n"
	"  { name = \"default\"; encap = \"ip\"; udp_src_port = 1701; udp_port = 1702;\n"
	"    hello_interval = 0; digest = \"md5\"; hide_avps = true; send_ack_msg = true;\n"
	"    rx_window = 64; max_sessions = 7; sccrq_max_retries = 3; send_window = 4;\n"
	"    session_setup_timeout = 300; }\n"
	");\n"
	"session_profiles = (\n"
	"  { name = \"vlan\"; pw_type = \"eth_vlan\"; vlan_id = 42; cookie_len = 8;\n"
	"    l2spec = \"default\"; data_seq = \"non-ip\"; ifname = \"v%d\"; mtu = 1400;\n"
	"    bridge = \"br0\"; address = \"2001:DB8::1/64\"; },\n"
	"  { name = \"ppp\"; pw_type = \"ppp\"; pppd_options = \"noauth mtu 1400\"; }\n"
	");\n"
	"peers = (\n"
	"  { name = \"core\"; match = \"192.0.2.0/24\"; tunnel_profile = \"fast\";\n"
	"    session_profile = \"vlan\"; secret = \"peer\"; refuse_unknown_sessions = true;\n"
	"    max_tunnels = 2; max_sessions = 30;\n"
	"    sessions = ( { remote_end_id = \"cust-*\"; profile = \"ppp\"; ifname = \"c-%r\"; },\n"
	"                 { remote_end_id = \"cust-gold\"; ifname = \"gold\"; bridge = \"br0\"; } ); },\n"
	"  { name = \"deny\"; match = \"192.0.2.128/25\"; accept = false; }\n"
	");\n"
	"peer_default = { accept = true; tunnel_profile = \"fast\"; session_profile = \"ppp\";\n"
	"  secret = \"dflt\"; max_tunnels = 5; max_sessions = 9; };\n"
	"lns_pools = ( { name = \"lns\"; hold_down = 5;\n"
	"  members = ( { address = \"198.51.100.2\"; weight = 3; }, { address = \"198.51.100.3:1702\"; } ); } );\n"
	"tunnels = (\n"
	"  { name = \"t1\"; peer = \"198.51.100.1\"; local = \"192.0.2.1\"; profile = \"fast\";\n"
	"    sessions = ( { name = \"s1\"; profile = \"vlan\"; remote_end_id = \"far s1\"; },\n"
	"                 { name = \"s2\"; } ); },\n"
	"  { name = \"t2\"; peer = \"[2001:db8::2]:1800\"; },\n"
	"  { name = \"t3\"; pool = \"lns\"; }\n"
	");\n"
	"hooks = { tunnel_up = \"/bin/true\"; tunnel_down = \"/bin/true\"; session_up = \"/a\";\n"
	"  session_down = \"/b\"; max_concurrent = 2; timeout = 1.5; };\n"
	"snmp = { enabled = " SNMP_ON_TEXT "; agentx_socket = \"tcp:localhost:705\"; };\n";

/* ---- defaults ---- */

START_TEST(test_defaults)
{
	struct l2tpd_config *c = config_defaults();
	const struct tunnel_profile *tp;
	const struct session_profile *sp;
	char buf[CFG_ADDR_STRLEN], host[CFG_NAME_MAX] = "";

	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->n_listen, 2);
	ck_assert_str_eq(config_addr_str(&c->listen[0], buf, sizeof(buf)), "0.0.0.0:1701");
	ck_assert_str_eq(config_addr_str(&c->listen[1], buf, sizeof(buf)), "[::]:1701");
	ck_assert_uint_eq(c->udp_port, 1701);
	ck_assert(!c->listen_ip);
	ck_assert_str_eq(c->event_loop, "epoll");
	gethostname(host, sizeof(host) - 1);
	if (host[0])
		ck_assert_str_eq(c->hostname, host);
	ck_assert(!c->router_id_set);
	ck_assert_uint_eq(c->router_id, 0);
	ck_assert_uint_eq(c->max_tunnels, 100000);
	ck_assert_uint_eq(c->max_sessions, 200000);
	ck_assert_uint_eq(c->max_sessions_per_tunnel, 16384);
	ck_assert_uint_eq(c->max_half_open, 1000);
	ck_assert_uint_eq(c->reserved_tunnels, 0);
	ck_assert_uint_eq(c->ctl_max_clients, 64);
	ck_assert_uint_eq(c->ctl_max_output, 16u << 20);
	ck_assert(!c->snmp_config_id);
	ck_assert_str_eq(c->log_level, "info");
	ck_assert_str_eq(c->dataplane, "kernel");
	ck_assert_ptr_nonnull(strstr(c->ctl_socket, "/l2tpv3d/l2tpv3d.ctl"));

	ck_assert_uint_eq(c->n_tunnel_profiles, 1);
	tp = &c->tunnel_profiles[0];
	ck_assert_str_eq(tp->name, "default");
	ck_assert_int_eq(tp->encap, L2TP_ENCAP_UDP);
	ck_assert_int_eq(tp->udp_src_port, CFG_SPORT_EPHEMERAL);
	ck_assert_uint_eq(tp->udp_port, 1701);
	ck_assert_uint_eq(tp->hello_interval_ms, 60000);
	ck_assert_uint_eq(tp->retransmit_initial_ms, 1000);
	ck_assert_uint_eq(tp->retransmit_cap_ms, 8000);
	ck_assert_uint_eq(tp->max_retries, 10);
	ck_assert_uint_eq(tp->sccrq_max_retries, 10);
	ck_assert_uint_eq(tp->delayed_ack_ms, 100);
	ck_assert_uint_eq(tp->rx_window, 16);
	ck_assert_uint_eq(tp->send_window, 0);
	ck_assert_uint_eq(tp->session_setup_timeout_ms, 60000);
	ck_assert_int_eq(tp->digest, CFG_DIGEST_NONE);

	ck_assert_uint_eq(c->n_session_profiles, 1);
	sp = &c->session_profiles[0];
	ck_assert_str_eq(sp->name, "default");
	ck_assert_uint_eq(sp->pw_type, L2TP_PW_ETH);
	ck_assert_uint_eq(sp->cookie_len, 8);
	ck_assert_str_eq(sp->ifname, "l2tpeth%d");

	ck_assert_uint_eq(c->n_peers, 0);
	ck_assert(!c->peer_default.accept);
	ck_assert_str_eq(c->peer_default.tunnel_profile, "default");
	ck_assert_uint_eq(c->n_tunnels, 0);
	ck_assert_uint_eq(c->hooks.max_concurrent, 8);
	ck_assert_uint_eq(c->hooks.timeout_ms, 30000);
	ck_assert(!c->snmp.enabled);
	config_free(c);
}
END_TEST

/* An empty file (or one with only comments) is the built-in defaults. */
START_TEST(test_empty_file_is_defaults)
{
	struct l2tpd_config *d = config_defaults(), *c = load_ok("# nothing here\n");
	char *a = print_str(d), *b = print_str(c);

	ck_assert_str_eq(a, b);
	ck_assert_ptr_eq(config_tunnel_profile(c, NULL), &c->tunnel_profiles[0]);
	free(a);
	free(b);
	config_free(c);
	config_free(d);
}
END_TEST

/* ---- bad files ---- */

struct bad_case {
	const char *text;
	unsigned line;
	const char *setting;	/* NULL: a syntax error */
	const char *reason;
};

static const struct bad_case bad_cases[] = {
	/* syntax */
	{ "global = {\n  udp_port = 1701\n  hostname = ;\n};\n", 3, NULL, "syntax error" },
	{ "global = { udp_port = 1; };\nglobal = { };\n", 2, NULL, "duplicate setting" },
	/* unknown names */
	{ "gloabl = { };\n", 1, "gloabl", "did you mean 'global'" },
	{ "stuff = 1;\n", 1, "stuff", "unknown section" },
	{ "global = {\n  udp_prot = 1701;\n};\n", 2, "global.udp_prot", "did you mean 'udp_port'" },
	{ "tunnel_profiles = ( { name = \"a\";\n helo_interval = 5; } );\n", 2,
	  "tunnel_profiles.helo_interval", "did you mean 'hello_interval'" },
	{ "tunnel_profiles = ( { name = \"a\"; hostname = \"x\"; } );\n", 1,
	  "tunnel_profiles.hostname", "belongs in 'global'" },
	{ "global = { frobnicate = true; };\n", 1, "global.frobnicate", "valid: listen," },
	/* types */
	{ "global = {\n\n  udp_port = \"1701\";\n};\n", 3, "global.udp_port", "expected an integer" },
	{ "global = { listen_ip = 1; };\n", 1, "global.listen_ip", "expected true or false" },
	{ "global = { hostname = 5; };\n", 1, "global.hostname", "expected a string" },
	{ "global = 1;\n", 1, "global", "expected a group" },
	{ "tunnel_profiles = { name = \"x\"; };\n", 1, "tunnel_profiles", "expected a list" },
	{ "tunnel_profiles = ( \"x\" );\n", 1, "tunnel_profiles", "expected a group" },
	{ "global = { listen = 5; };\n", 1, "global.listen", "expected an array" },
	{ "tunnel_profiles = ( { name = \"a\"; hello_interval = \"60\"; } );\n", 1,
	  "tunnel_profiles.hello_interval", "expected a number of seconds" },
	/* ranges */
	{ "session_profiles = (\n { name = \"a\";\n   cookie_len = 3; } );\n", 3,
	  "session_profiles.cookie_len", "valid: 0, 4, 8" },
	{ "tunnel_profiles = ( { name = \"a\"; rx_window = 0; } );\n", 1,
	  "tunnel_profiles.rx_window", "valid: 1..65535" },
	{ "tunnel_profiles = ( { name = \"a\"; rx_window = 65536; } );\n", 1,
	  "tunnel_profiles.rx_window", "out of range" },
	{ "tunnel_profiles = ( { name = \"a\"; send_window = 65536; } );\n", 1,
	  "tunnel_profiles.send_window", "out of range" },
	{ "tunnel_profiles = ( { name = \"a\"; session_setup_timeout = 0; } );\n", 1,
	  "tunnel_profiles.session_setup_timeout", "valid: 1..3600" },
	{ "tunnel_profiles = ( { name = \"a\"; session_setup_timeout = 3601; } );\n", 1,
	  "tunnel_profiles.session_setup_timeout", "valid: 1..3600" },
	{ "tunnel_profiles = ( { name = \"a\";\n retransmit_initial = 4;\n retransmit_cap = 2; } );\n",
	  3, "tunnel_profiles.retransmit_cap", "valid: retransmit_cap >= retransmit_initial" },
	{ "tunnel_profiles = ( { name = \"default\"; retransmit_cap = 2; },\n"
	  "  { name = \"b\";\n  retransmit_initial = 3; } );\n", 3,
	  "tunnel_profiles.retransmit_cap", "less than retransmit_initial" },
	{ "tunnel_profiles = ( { name = \"a\"; max_retries = 0; } );\n", 1,
	  "tunnel_profiles.max_retries", "valid: 1..1000" },
	{ "tunnel_profiles = ( { name = \"a\"; hello_interval = 0.5; } );\n", 1,
	  "tunnel_profiles.hello_interval", "valid: 0 (off) or 1..86400 seconds" },
	{ "tunnel_profiles = ( { name = \"a\"; delayed_ack = -1; } );\n", 1,
	  "tunnel_profiles.delayed_ack", "out of range" },
	{ "global = { udp_port = 0; };\n", 1, "global.udp_port", "valid: 1..65535" },
	{ "global = { max_tunnels = 99999999999; };\n", 1, "global.max_tunnels",
	  "99999999999 is out of range" },
	{ "global = { max_sessions = -1; };\n", 1, "global.max_sessions", "out of range" },
	{ "global = { max_tunnels = 10;\n  reserved_tunnels = 10; };\n", 2, "global.reserved_tunnels",
	  "10 reserved of global.max_tunnels 10 (valid: fewer than max_tunnels)" },
	{ "peers = ( { name = \"p\"; match = \"any\";\n  max_tunnels = -1; } );\n", 2,
	  "peers.max_tunnels", "out of range" },
	{ "session_profiles = ( { name = \"a\"; mtu = 20; } );\n", 1, "session_profiles.mtu",
	  "valid: 0 (from the path MTU) or 68..65535" },
	{ "session_profiles = ( { name = \"a\"; pw_type = \"eth_vlan\"; vlan_id = 4095; } );\n", 1,
	  "session_profiles.vlan_id", "out of range" },
	{ "hooks = { timeout = 0; };\n", 1, "hooks.timeout", "valid: 1..3600 seconds" },
	{ "global = { router_id = 0; };\n", 1, "global.router_id", "not a valid router id" },
	{ "global = { router_id = \"1.2.3\"; };\n", 1, "global.router_id", "not a router id" },
	/* words */
	{ "tunnel_profiles = ( { name = \"a\"; digest = \"sha-1\"; } );\n", 1,
	  "tunnel_profiles.digest", "did you mean 'sha1'" },
	{ "tunnel_profiles = ( { name = \"a\"; encap = \"tcp\"; } );\n", 1,
	  "tunnel_profiles.encap", "valid: udp, ip" },
	{ "tunnel_profiles = ( { name = \"a\"; udp_src_port = 1702; } );\n", 1,
	  "tunnel_profiles.udp_src_port", "valid: ephemeral, 1701" },
	{ "session_profiles = ( { name = \"a\"; pw_type = \"atm\"; } );\n", 1,
	  "session_profiles.pw_type", "valid: eth, eth_vlan, ppp" },
	{ "global = { event_loop = \"select\"; };\n", 1, "global.event_loop", "valid: epoll, poll" },
	{ "global = { log_level = \"verbose\"; };\n", 1, "global.log_level",
	  "valid: err, warn, info, debug" },
	/* names and references */
	{ "tunnel_profiles = ( { name = \"a\"; },\n  { name = \"b\"; },\n  { name = \"a\"; } );\n", 3,
	  "tunnel_profiles.name", "duplicate name 'a' (first at line 1)" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\"; },\n"
	  "  { name = \"t\"; peer = \"192.0.2.2\"; } );\n", 2, "tunnels.name", "duplicate name 't'" },
	{ "tunnel_profiles = (\n  { hello_interval = 5; } );\n", 2, "tunnel_profiles.name",
	  "every tunnel profile needs a name" },
	{ "tunnel_profiles = ( { name = \"with space\"; } );\n", 1, "tunnel_profiles.name",
	  "not allowed in a name" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\";\n  profile = \"secure\"; } );\n", 2,
	  "tunnels.profile", "unknown tunnel profile 'secure' (valid: default)" },
	{ "tunnel_profiles = ( { name = \"secure\"; } );\n"
	  "peers = ( { name = \"p\"; match = \"any\"; tunnel_profile = \"secur\"; } );\n", 2,
	  "peers.tunnel_profile", "did you mean 'secure'" },
	{ "peers = ( { name = \"p\"; match = \"any\";\n session_profile = \"x\"; } );\n", 2,
	  "peers.session_profile", "unknown session profile 'x'" },
	{ "peer_default = { accept = true;\n tunnel_profile = \"nope\"; };\n", 2,
	  "peer_default.tunnel_profile", "unknown tunnel profile 'nope'" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\";\n"
	  "  sessions = ( { name = \"s\"; profile = \"vlan\"; } ); } );\n", 2,
	  "tunnels.sessions.profile", "unknown session profile 'vlan'" },
	{ "peer_default = { name = \"x\"; };\n", 1, "peer_default.name", "unknown setting" },
	/* addresses */
	{ "peers = ( { name = \"p\";\n  match = \"192.0.2.1/24\"; } );\n", 2, "peers.match",
	  "host bits set (did you mean '192.0.2.0/24'?)" },
	{ "peers = ( { name = \"p\"; match = \"lns.example.com\"; } );\n", 1, "peers.match",
	  "not an address or prefix" },
	{ "peers = ( { name = \"p\"; match = \"10.0.0.0/33\"; } );\n", 1, "peers.match",
	  "bad prefix length (valid: 0..32)" },
	{ "peers = ( { name = \"p\"; match = \"10.0.0.0/8\"; },\n"
	  "  { name = \"q\"; match = \"10.0.0.0/8\"; } );\n", 2, "peers.match",
	  "duplicate match '10.0.0.0/8'" },
	{ "peers = ( { name = \"p\"; accept = true; } );\n", 1, "peers.match", "missing" },
	{ "tunnels = ( { name = \"t\"; } );\n", 1, "tunnels.peer", "missing" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1:0\"; } );\n", 1, "tunnels.peer",
	  "not an IP address" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\";\n local = \"2001:db8::1\"; } );\n", 2,
	  "tunnels.local", "IPv6 address for an IPv4 peer" },
	{ "global = {\n  listen = [\"0.0.0.0\",\n    \"nowhere\"];\n};\n", 3, "global.listen",
	  "'nowhere' is not an IP address" },
	{ "global = { listen = [\"192.0.2.1\", \"192.0.2.1\"]; };\n", 1, "global.listen",
	  "listed twice" },
	{ "global = { listen = [\"192.0.2.1:1702\"]; };\n", 1, "global.listen",
	  "no port here (valid: an address; every listening socket uses global.udp_port)" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\";\n local = \"192.0.2.2:5000\"; } );\n",
	  2, "tunnels.local", "no port here" },
	{ "session_profiles = ( { name = \"a\"; address = \"10.0.0.1/40\"; } );\n", 1,
	  "session_profiles.address", "bad prefix length" },
	/* strings */
	{ "session_profiles = ( { name = \"a\"; ifname = \"l2tpethernet%d\"; } );\n", 1,
	  "session_profiles.ifname", "17 characters once '%d' is a 5-digit number (valid: at most 15)" },
	{ "session_profiles = ( { name = \"a\"; ifname = \"l2tp%d-%d\"; } );\n", 1,
	  "session_profiles.ifname", "has 2 '%d'" },
	{ "session_profiles = ( { name = \"a\"; ifname = \"l2tp%s\"; } );\n", 1,
	  "session_profiles.ifname", "'%' must be followed by 'd'" },
	{ "session_profiles = ( { name = \"a\"; ifname = \"l2tp/%d\"; } );\n", 1,
	  "session_profiles.ifname", "may not contain '/'" },
	{ "session_profiles = ( { name = \"a\"; bridge = \"br%d\"; } );\n", 1,
	  "session_profiles.bridge", "not allowed" },
	{ "global = { state_dir = \"run/l2tpv3d\"; };\n", 1, "global.state_dir",
	  "not an absolute path" },
	{ "global = { ctl_socket = \"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.ctl\"; };\n", 1, "global.ctl_socket",
	  "too long for a UNIX socket" },
	{ "hooks = { tunnel_up = \"hooks/up\"; };\n", 1, "hooks.tunnel_up", "not an absolute path" },
	{ "tunnel_profiles = ( { name = \"a\"; secret = \"0123456789012345678901234567890123456789"
	  "012345678901234567890123456789012345678901234567890123456789012345678901234567890123"
	  "456789\"; } );\n", 1, "tunnel_profiles.secret", "too long: 130 characters (valid: at most 127)" },
	{ "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\";\n"
	  "  sessions = ( { name = \"a\"; },\n  { name = \"b\"; remote_end_id = \"a\"; } ); } );\n", 3,
	  "tunnels.sessions.remote_end_id", "duplicate remote_end_id 'a' (first at line 2)" },
	/* settings that go together */
	{ "tunnel_profiles = ( { name = \"a\";\n  digest = \"sha1\"; } );\n", 2,
	  "tunnel_profiles.digest", "needs a secret" },
	{ "tunnel_profiles = ( { name = \"default\";\n  digest = \"md5\"; },\n { name = \"b\"; } );\n",
	  2, "tunnel_profiles.digest", "needs a secret" },
	{ "tunnel_profiles = ( { name = \"a\"; secret = \"s\";\n  hide_avps = true; } );\n", 2,
	  "tunnel_profiles.hide_avps", "needs a digest" },
	{ "tunnel_profiles = ( { name = \"s\"; digest = \"md5\"; } );\n"
	  "peers = ( { name = \"p\"; match = \"10.0.0.0/8\"; tunnel_profile = \"s\"; secret = \"x\"; },\n"
	  "  { name = \"q\"; match = \"any\";\n    tunnel_profile = \"s\"; } );\n", 4, "peers.secret",
	  "uses digest 'md5' and no secret is set" },
	{ "tunnel_profiles = ( { name = \"s\"; digest = \"md5\"; } );\n"
	  "peers = ( { name = \"p\"; match = \"any\"; tunnel_profile = \"s\"; secret = \"x\"; } );\n"
	  "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\";\n  profile = \"s\"; } );\n", 4,
	  "tunnels.profile", "neither it nor 'global' has a secret" },
	{ "session_profiles = ( { name = \"a\";\n  data_seq = \"all\"; } );\n", 2,
	  "session_profiles.data_seq", "needs the L2-Specific Sublayer" },
	{ "session_profiles = ( { name = \"a\"; vlan_id = 7; } );\n", 1, "session_profiles.vlan_id",
	  "pw_type is \"eth_vlan\"" },
	{ "session_profiles = ( { name = \"a\"; pppd_options = \"noauth\"; } );\n", 1,
	  "session_profiles.pppd_options", "unless pw_type is \"ppp\"" },
	{ "global = { max_tunnels = 1; };\n"
	  "tunnels = ( { name = \"a\"; peer = \"192.0.2.1\"; }, { name = \"b\"; peer = \"192.0.2.2\"; } );\n",
	  2, "tunnels", "2 static tunnels but global.max_tunnels is 1" },
};

START_TEST(test_bad)
{
	const struct bad_case *bc = &bad_cases[_i];
	struct tmpconf t;
	char err[1024] = "", prefix[128], setting[128];
	struct l2tpd_config *c = load_text(bc->text, err, sizeof(err), &t);

	unlink(t.path);
	ck_assert_msg(c == NULL, "accepted:\n%s", bc->text);
	snprintf(prefix, sizeof(prefix), "%s:%u: ", t.path, bc->line);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0,
		      "error '%s' does not start with '%s'", err, prefix);
	if (bc->setting) {
		snprintf(setting, sizeof(setting), ": setting '%s': ", bc->setting);
		ck_assert_msg(strstr(err, setting) != NULL, "error '%s' does not name %s", err,
			      setting);
	} else {
		ck_assert_msg(strstr(err, ": syntax error") != NULL, "error '%s': no syntax error",
			      err);
	}
	ck_assert_msg(strstr(err, bc->reason) != NULL, "error '%s' does not say '%s'", err,
		      bc->reason);
}
END_TEST

/*
 * snmp.enabled = true: with SNMP built in, set; without, refused at load
 * (l2tpv3d -n fails, a start exits 78) rather than silently ignored.
 * false, and the socket alone, are accepted either way.
 */
START_TEST(test_snmp_enabled)
{
	static const char on[] = "global = { };\n\nsnmp = {\n  enabled = true;\n};\n";
	struct tmpconf t;
	char err[1024] = "";
	struct l2tpd_config *c = load_text(on, err, sizeof(err), &t);

	unlink(t.path);
#ifdef HAVE_SNMP
	ck_assert_msg(c != NULL, "refused: %s", err);
	ck_assert(c->snmp.enabled);
	config_free(c);
#else
	char prefix[128];

	ck_assert_msg(c == NULL, "accepted without SNMP:\n%s", on);
	snprintf(prefix, sizeof(prefix), "%s:4: setting 'snmp.enabled': ", t.path);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0,
		      "error '%s' does not start with '%s'", err, prefix);
	ck_assert_msg(strstr(err, "built without SNMP support") != NULL &&
		      strstr(err, "--with-snmp") != NULL, "error '%s' does not say why", err);
#endif

	c = load_ok("snmp = { enabled = false; agentx_socket = \"/run/agentx\"; };\n");
	ck_assert(!c->snmp.enabled);
	ck_assert_str_eq(c->snmp.agentx_socket, "/run/agentx");
	assert_fixed_point(c);
	config_free(c);
}
END_TEST

START_TEST(test_missing_file)
{
	char err[256];

	ck_assert_ptr_null(config_load("/nonexistent/l2tpv3d.conf", err, sizeof(err)));
	ck_assert_str_eq(err, "/nonexistent/l2tpv3d.conf: cannot read: No such file or directory");
	ck_assert_ptr_null(config_load("/", err, sizeof(err)));
	ck_assert_str_eq(err, "/: cannot read: Is a directory");
	/* no room for the message: still NULL, no crash */
	ck_assert_ptr_null(config_load("/nonexistent", NULL, 0));
}
END_TEST

/* An error in an @include'd file names that file. */
START_TEST(test_include)
{
	struct tmpconf inc, top;
	char text[256], err[1024], want[128], cwd[4096];
	struct l2tpd_config *c;
	const char *base;

	conf_write(&inc, "tunnel_profiles = ( { name = \"x\";\n  rx_window = 0; } );\n");
	base = strrchr(inc.path, '/') + 1;
	snprintf(text, sizeof(text), "global = { hostname = \"h\"; };\n@include \"%s\"\n", base);
	conf_write(&top, text);
	c = config_load(top.path, err, sizeof(err));
	ck_assert_ptr_null(c);
	snprintf(want, sizeof(want), "%s:2: setting 'tunnel_profiles.rx_window'", inc.path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "got '%s'", err);

	/* and a good include is read relative to the including file, not the cwd */
	unlink(inc.path);
	unlink(top.path);
	conf_write(&inc, "tunnel_profiles = ( { name = \"x\"; rx_window = 3; } );\n");
	base = strrchr(inc.path, '/') + 1;
	snprintf(text, sizeof(text), "@include \"%s\"\n", base);
	conf_write(&top, text);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert(chdir("/") == 0);
	c = config_load(top.path, err, sizeof(err));
	ck_assert(chdir(cwd) == 0);
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(config_tunnel_profile(c, "x")->rx_window, 3);
	config_free(c);
	unlink(inc.path);
	unlink(top.path);
}
END_TEST

/* secret_file: the file's content without one trailing newline; a file open to others is refused. */
START_TEST(test_secret_file)
{
	struct tmpconf sec, top;
	char text[512], err[1024], want[256], *printed;
	struct l2tpd_config *c;

	conf_write(&sec, "from-a-file\n");
	ck_assert_int_eq(chmod(sec.path, 0600), 0);
	snprintf(text, sizeof(text), "global = { secret_file = \"%s\"; };\n"
		 "tunnel_profiles = ( { name = \"default\"; digest = \"md5\"; },\n"
		 "  { name = \"own\"; secret = \"inline\"; } );\n"
		 "peers = ( { name = \"p\"; match = \"any\"; secret_file = \"%s\"; } );\n",
		 sec.path, strrchr(sec.path, '/') + 1);	/* relative: to the main file's directory */
	conf_write(&top, text);
	c = config_load(top.path, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_str_eq(c->secret, "from-a-file");
	ck_assert_str_eq(c->peers[0].secret, "from-a-file");
	ck_assert_str_eq(config_tunnel_profile(c, "own")->secret, "inline");
	/* the secret is never printed, even when asked for; the file is */
	config_print_secrets(true);
	printed = print_str(c);
	config_print_secrets(false);
	ck_assert_ptr_null(strstr(printed, "from-a-file"));
	snprintf(want, sizeof(want), "  secret_file = \"%s\";\n", sec.path);
	ck_assert_ptr_nonnull(strstr(printed, want));
	free(printed);
	config_free(c);

	ck_assert_int_eq(chmod(sec.path, 0644), 0);
	ck_assert_ptr_null(config_load(top.path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:1: setting 'global.secret_file': %s is readable by every "
		 "user (mode 0644)", top.path, sec.path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "got '%s'", err);

	ck_assert_int_eq(chmod(sec.path, 0640), 0);
	ck_assert_int_eq(truncate(sec.path, 0), 0);
	ck_assert_ptr_null(config_load(top.path, err, sizeof(err)));
	ck_assert_msg(strstr(err, "is empty") != NULL, "got '%s'", err);
	unlink(sec.path);
	unlink(top.path);
}
END_TEST

static int refuse_trust(const char *what, const char *path, char *why, size_t len)
{
	if (strstr(path, "bad") == NULL)
		return 0;
	snprintf(why, len, "%s %s is not trusted", what, path);
	return -1;
}

/* include_dir: its *.conf files add to the lists, in name order; each is checked. */
START_TEST(test_include_dir)
{
	char dir[] = "/tmp/check_config.d.XXXXXX", sub[128], file[192], text[256], err[1024];
	struct l2tpd_config *c;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/conf.d", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(file, sizeof(file), "%s/b.conf", sub);
	f = fopen(file, "w");
	fputs("tunnels = ( { name = \"t-b\"; peer = \"192.0.2.2\"; } );\n", f);
	fclose(f);
	snprintf(file, sizeof(file), "%s/a.conf", sub);
	f = fopen(file, "w");
	fputs("tunnels = ( { name = \"t-a\"; peer = \"192.0.2.1\"; } );\n", f);
	fclose(f);
	snprintf(file, sizeof(file), "%s/l2tpv3d.conf", dir);
	f = fopen(file, "w");
	fputs("global = { include_dir = \"conf.d\"; };\n"
	      "tunnels = ( { name = \"main\"; peer = \"192.0.2.9\"; } );\n", f);
	fclose(f);
	c = config_load(file, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->n_tunnels, 3);
	ck_assert_str_eq(c->tunnels[0].name, "main");
	ck_assert_str_eq(c->tunnels[1].name, "t-a");
	ck_assert_str_eq(c->tunnels[2].name, "t-b");
	config_free(c);

	/* a file the daemon would not trust: refused, named */
	snprintf(text, sizeof(text), "%s/bad.conf", sub);
	f = fopen(text, "w");
	fputs("peers = ( );\n", f);
	fclose(f);
	config_set_trust_check(refuse_trust);
	c = config_load(file, err, sizeof(err));
	config_set_trust_check(NULL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "included configuration") != NULL && strstr(err, text) != NULL,
		      "got '%s'", err);
	unlink(text);
	unlink(file);
	snprintf(file, sizeof(file), "%s/a.conf", sub);
	unlink(file);
	snprintf(file, sizeof(file), "%s/b.conf", sub);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
}
END_TEST

/* ---- good files ---- */

START_TEST(test_full)
{
	struct l2tpd_config *c = load_ok(full_conf);
	const struct tunnel_profile *def, *fast;
	const struct session_profile *vlan, *ppp;
	char buf[CFG_ADDR_STRLEN];

	ck_assert_uint_eq(c->n_listen, 2);
	ck_assert_str_eq(config_addr_str(&c->listen[0], buf, sizeof(buf)), "192.0.2.1:1701");
	ck_assert_str_eq(config_addr_str(&c->listen[1], buf, sizeof(buf)), "[2001:db8::1]:1701");
	ck_assert(c->listen_ip);
	ck_assert_str_eq(c->event_loop, "poll");
	ck_assert_str_eq(c->hostname, "lns1");
	ck_assert(c->router_id_set);
	ck_assert_uint_eq(c->router_id, 0xc0000201);
	ck_assert_str_eq(c->secret, "q\"uote\\back\nnl\x01");
	ck_assert_uint_eq(c->max_tunnels, 3000000000u);	/* past 32-bit signed, no L */
	ck_assert_uint_eq(c->max_sessions, 4294967295u);
	ck_assert_uint_eq(c->reserved_tunnels, 100);
	ck_assert_str_eq(c->dataplane, "null");

	/* "default" is [0] even when the file lists it second */
	ck_assert_uint_eq(c->n_tunnel_profiles, 2);
	def = &c->tunnel_profiles[0];
	fast = config_tunnel_profile(c, "fast");
	ck_assert_str_eq(def->name, "default");
	ck_assert_ptr_eq(fast, &c->tunnel_profiles[1]);
	ck_assert_int_eq(def->encap, L2TP_ENCAP_IP);
	ck_assert_int_eq(def->digest, CFG_DIGEST_MD5);
	/* fast inherits from default what it does not set */
	ck_assert_int_eq(fast->encap, L2TP_ENCAP_IP);
	ck_assert_int_eq(fast->udp_src_port, CFG_SPORT_1701);
	ck_assert_uint_eq(fast->udp_port, 1702);
	ck_assert_uint_eq(fast->rx_window, 64);
	ck_assert_uint_eq(fast->send_window, 4);
	ck_assert_uint_eq(fast->session_setup_timeout_ms, 300000);
	ck_assert(fast->hide_avps);
	ck_assert_uint_eq(fast->hello_interval_ms, 5000);
	ck_assert_uint_eq(fast->retransmit_initial_ms, 250);
	ck_assert_uint_eq(fast->retransmit_cap_ms, 2000);
	ck_assert_uint_eq(fast->max_retries, 4);
	ck_assert_uint_eq(fast->sccrq_max_retries, 3);	/* default sets it: inherited */
	ck_assert_uint_eq(fast->delayed_ack_ms, 0);
	ck_assert_uint_eq(def->hello_interval_ms, 0);

	vlan = config_session_profile(c, "vlan");
	ppp = config_session_profile(c, "ppp");
	ck_assert_ptr_nonnull(vlan);
	ck_assert_ptr_nonnull(ppp);
	ck_assert_uint_eq(vlan->pw_type, L2TP_PW_ETH_VLAN);
	ck_assert_uint_eq(vlan->vlan_id, 42);
	ck_assert_uint_eq(vlan->cookie_len, 8);
	ck_assert_uint_eq(vlan->l2spec, 1);
	ck_assert_uint_eq(vlan->data_seq, 1);
	ck_assert_str_eq(vlan->address, "2001:db8::1/64");
	ck_assert_uint_eq(ppp->pw_type, L2TP_PW_PPP);
	ck_assert_str_eq(ppp->ifname, "l2tpeth%d");
	ck_assert_ptr_null(config_session_profile(c, "nope"));

	ck_assert_uint_eq(c->n_peers, 2);
	ck_assert(c->peers[0].accept);
	ck_assert(!c->peers[1].accept);
	ck_assert_str_eq(c->peers[1].tunnel_profile, "default");
	ck_assert_uint_eq(c->peers[0].max_tunnels, 2);
	ck_assert_uint_eq(c->peers[0].max_sessions, 30);
	ck_assert_uint_eq(c->peers[1].max_tunnels, 0);	/* only the global limits */
	ck_assert(c->peer_default.accept);
	ck_assert_uint_eq(c->peer_default.max_tunnels, 5);
	ck_assert_uint_eq(c->peer_default.max_sessions, 9);

	ck_assert_uint_eq(c->n_tunnels, 3);
	ck_assert_str_eq(config_addr_str(&c->tunnels[0].peer, buf, sizeof(buf)),
			 "198.51.100.1:1702");	/* the profile's udp_port */
	ck_assert_str_eq(config_addr_str(&c->tunnels[0].local, buf, sizeof(buf)), "192.0.2.1");
	ck_assert_int_eq(c->tunnels[1].local.ss.ss_family, AF_UNSPEC);
	ck_assert_str_eq(config_addr_str(&c->tunnels[1].peer, buf, sizeof(buf)),
			 "[2001:db8::2]:1800");
	ck_assert_uint_eq(c->tunnels[0].n_sessions, 2);
	ck_assert_str_eq(c->tunnels[0].sessions[0].remote_end_id, "far s1");
	ck_assert_str_eq(c->tunnels[0].sessions[1].remote_end_id, "s2");	/* its name */
	ck_assert_str_eq(c->tunnels[0].sessions[1].profile, "default");
	ck_assert_uint_eq(c->tunnels[1].n_sessions, 0);

	/* a pool: weights, the port left to the profile or its own; a tunnel through it */
	ck_assert_uint_eq(c->n_lns_pools, 1);
	ck_assert_ptr_eq(config_lns_pool(c, "lns"), &c->lns_pools[0]);
	ck_assert_ptr_null(config_lns_pool(c, "nope"));
	ck_assert_uint_eq(c->lns_pools[0].hold_down_ms, 5000);
	ck_assert_uint_eq(c->lns_pools[0].n_members, 2);
	ck_assert_uint_eq(c->lns_pools[0].members[0].weight, 3);
	ck_assert_uint_eq(c->lns_pools[0].members[1].weight, 1);	/* the default */
	ck_assert_str_eq(config_addr_str(&c->lns_pools[0].members[0].address, buf, sizeof(buf)),
			 "198.51.100.2");
	ck_assert_str_eq(c->tunnels[2].pool, "lns");
	ck_assert_int_eq(c->tunnels[2].peer.ss.ss_family, AF_UNSPEC);
	{
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(1701) };

		inet_pton(AF_INET, "198.51.100.2", &a.sin_addr);
		ck_assert(config_pool_member_is(&c->lns_pools[0].members[0], (struct sockaddr *)&a));
		ck_assert(!config_pool_member_is(&c->lns_pools[0].members[1], (struct sockaddr *)&a));
		inet_pton(AF_INET, "198.51.100.3", &a.sin_addr);
		ck_assert(!config_pool_member_is(&c->lns_pools[0].members[1], (struct sockaddr *)&a));
		a.sin_port = htons(1702);
		ck_assert(config_pool_member_is(&c->lns_pools[0].members[1], (struct sockaddr *)&a));
	}

	ck_assert_uint_eq(c->hooks.timeout_ms, 1500);
	ck_assert_int_eq(c->snmp.enabled, strcmp(SNMP_ON_TEXT, "true") == 0);
	ck_assert_str_eq(c->snmp.agentx_socket, "tcp:localhost:705");

	/* secrets: the peer's, the profile's, the global one */
	ck_assert_str_eq(config_secret(c, fast, &c->peers[0]), "peer");
	ck_assert_str_eq(config_secret(c, fast, &c->peers[1]), c->secret);
	ck_assert_str_eq(config_secret(c, fast, NULL), c->secret);
	assert_fixed_point(c);
	config_free(c);
}
END_TEST

START_TEST(test_inheritance)
{
	struct l2tpd_config *c = load_ok(
		"tunnel_profiles = (\n"
		"  { name = \"a\"; },\n"
		"  { name = \"default\"; max_retries = 5; hello_interval = 30; digest = \"sha1\";\n"
		"    secret = \"s\"; },\n"
		"  { name = \"b\"; max_retries = 2; digest = \"none\"; },\n"
		"  { name = \"c\"; sccrq_max_retries = 9; }\n"
		");\n"
		"session_profiles = ( { name = \"default\"; cookie_len = 4; mtu = 1450; },\n"
		"  { name = \"x\"; mtu = 0; } );\n");
	const struct tunnel_profile *a = config_tunnel_profile(c, "a");
	const struct tunnel_profile *b = config_tunnel_profile(c, "b");
	const struct tunnel_profile *cc = config_tunnel_profile(c, "c");

	ck_assert_str_eq(c->tunnel_profiles[0].name, "default");
	ck_assert_uint_eq(c->n_tunnel_profiles, 4);
	ck_assert_str_eq(c->tunnel_profiles[1].name, "a");	/* file order after default */
	ck_assert_uint_eq(a->max_retries, 5);
	ck_assert_uint_eq(a->sccrq_max_retries, 5);
	ck_assert_uint_eq(a->hello_interval_ms, 30000);
	ck_assert_int_eq(a->digest, CFG_DIGEST_SHA1);
	ck_assert_str_eq(a->secret, "s");
	ck_assert_uint_eq(a->rx_window, 16);			/* built-in */
	/* sccrq_max_retries follows the profile's own max_retries */
	ck_assert_uint_eq(b->max_retries, 2);
	ck_assert_uint_eq(b->sccrq_max_retries, 2);
	ck_assert_int_eq(b->digest, CFG_DIGEST_NONE);
	ck_assert_uint_eq(cc->max_retries, 5);
	ck_assert_uint_eq(cc->sccrq_max_retries, 9);
	ck_assert_uint_eq(config_session_profile(c, "x")->cookie_len, 4);
	ck_assert_uint_eq(config_session_profile(c, "x")->mtu, 0);
	ck_assert_uint_eq(config_session_profile(c, "default")->mtu, 1450);
	assert_fixed_point(c);
	config_free(c);
}
END_TEST

/* Without a "default" in the file, [0] is the built-in one and the others start from it. */
START_TEST(test_builtin_default)
{
	struct l2tpd_config *c = load_ok(
		"tunnel_profiles = ( { name = \"x\"; rx_window = 4; } );\n"
		"session_profiles = ( { name = \"y\"; pw_type = \"ppp\"; } );\n");

	ck_assert_uint_eq(c->n_tunnel_profiles, 2);
	ck_assert_str_eq(c->tunnel_profiles[0].name, "default");
	ck_assert_uint_eq(c->tunnel_profiles[0].rx_window, 16);
	ck_assert_uint_eq(c->tunnel_profiles[1].rx_window, 4);
	ck_assert_uint_eq(c->tunnel_profiles[1].hello_interval_ms, 60000);
	ck_assert_uint_eq(c->n_session_profiles, 2);
	ck_assert_str_eq(c->session_profiles[0].name, "default");
	ck_assert_uint_eq(c->session_profiles[1].pw_type, L2TP_PW_PPP);
	config_free(c);
}
END_TEST

START_TEST(test_global_values)
{
	struct l2tpd_config *c;
	char buf[CFG_ADDR_STRLEN];

	/* listen follows udp_port unless an address has its own port */
	c = load_ok("global = { udp_port = 1702; };\n");
	ck_assert_str_eq(config_addr_str(&c->listen[0], buf, sizeof(buf)), "0.0.0.0:1702");
	ck_assert_str_eq(config_addr_str(&c->listen[1], buf, sizeof(buf)), "[::]:1702");
	config_free(c);
	c = load_ok("global = { listen = [\"192.0.2.1\", \"::1\"]; udp_port = 1702; };\n");
	ck_assert_uint_eq(c->n_listen, 2);
	ck_assert_str_eq(config_addr_str(&c->listen[0], buf, sizeof(buf)), "192.0.2.1:1702");
	ck_assert_str_eq(config_addr_str(&c->listen[1], buf, sizeof(buf)), "[::1]:1702");
	assert_fixed_point(c);
	config_free(c);
	c = load_ok("global = { listen = []; };\n");	/* LAC only: no listening socket */
	ck_assert_uint_eq(c->n_listen, 0);
	assert_fixed_point(c);
	config_free(c);
	c = load_ok("global = { listen = \"::1\"; };\n");
	ck_assert_uint_eq(c->n_listen, 1);
	config_free(c);

	/* router id: dotted quad, integer, integer in a string, "" */
	c = load_ok("global = { router_id = 3221225985; };\n");
	ck_assert_uint_eq(c->router_id, 3221225985u);
	ck_assert(c->router_id_set);
	config_free(c);
	c = load_ok("global = { router_id = \"16777217\"; };\n");
	ck_assert_uint_eq(c->router_id, 16777217);
	config_free(c);
	c = load_ok("global = { router_id = \"\"; hostname = \"\"; };\n");
	ck_assert(!c->router_id_set);
	ck_assert(c->hostname[0] != '\0');	/* "" is this host's name */
	config_free(c);

	/* words are case-insensitive and printed in lower case */
	c = load_ok("global = { log_level = \"DEBUG\"; };\n"
		    "tunnel_profiles = ( { name = \"default\"; digest = \"SHA1\"; secret = \"k\"; } );\n");
	ck_assert_str_eq(c->log_level, "debug");
	ck_assert_int_eq(c->tunnel_profiles[0].digest, CFG_DIGEST_SHA1);
	config_free(c);

	/* hex integers, large ones too */
	c = load_ok("global = { max_sessions = 0xFFFFFFFF; max_tunnels = 0x10; };\n");
	ck_assert_uint_eq(c->max_sessions, 4294967295u);
	ck_assert_uint_eq(c->max_tunnels, 16);
	config_free(c);
}
END_TEST

/* A digest with a secret only in the peer entries that use the profile is fine. */
START_TEST(test_peer_secret)
{
	struct l2tpd_config *c = load_ok(
		"tunnel_profiles = ( { name = \"s\"; digest = \"md5\"; hide_avps = true; } );\n"
		"peers = ( { name = \"p\"; match = \"any\"; tunnel_profile = \"s\"; secret = \"x\"; },\n"
		"  { name = \"q\"; match = \"10.0.0.0/8\"; tunnel_profile = \"s\"; accept = false; } );\n");

	ck_assert_str_eq(config_secret(c, config_tunnel_profile(c, "s"), &c->peers[0]), "x");
	config_free(c);
	/* the global secret serves everything */
	c = load_ok("global = { secret = \"g\"; };\n"
		    "tunnel_profiles = ( { name = \"default\"; digest = \"sha1\"; } );\n"
		    "tunnels = ( { name = \"t\"; peer = \"192.0.2.1\"; } );\n"
		    "peer_default = { accept = true; };\n");
	ck_assert_str_eq(config_secret(c, &c->tunnel_profiles[0], &c->peer_default), "g");
	config_free(c);
}
END_TEST

/* ---- peer matching ---- */

static const char peers_conf[] =
	"peers = (\n"
	"  { name = \"any\"; match = \"any\"; },\n"
	"  { name = \"ten\"; match = \"10.0.0.0/8\"; },\n"
	"  { name = \"ten-one\"; match = \"10.1.0.0/16\"; accept = false; },\n"
	"  { name = \"host\"; match = \"10.1.2.3\"; },\n"
	"  { name = \"odd\"; match = \"10.2.0.0/15\"; },\n"
	"  { name = \"v4-all\"; match = \"0.0.0.0/0\"; },\n"
	"  { name = \"doc6\"; match = \"2001:db8::/32\"; },\n"
	"  { name = \"doc6-1\"; match = \"2001:DB8:1::/48\"; },\n"
	"  { name = \"v6host\"; match = \"2001:db8:1::7/128\"; }\n"
	");\n";

static const struct {
	const char *addr;
	const char *peer;	/* NULL: peer_default */
} match_cases[] = {
	{ "10.1.2.3", "host" },
	{ "10.1.2.4", "ten-one" },
	{ "10.9.9.9", "ten" },
	{ "10.2.0.1", "odd" },
	{ "10.3.255.255", "odd" },
	{ "10.4.0.1", "ten" },
	{ "192.0.2.1", "v4-all" },
	{ "::ffff:10.1.2.3", "host" },	/* IPv4 through a dual-stack socket */
	{ "2001:db8:1::7", "v6host" },
	{ "2001:db8:1::8", "doc6-1" },
	{ "2001:db8:2::1", "doc6" },
	{ "2001:dead::1", "any" },
	{ "::1", "any" },
};

START_TEST(test_match_peer)
{
	struct l2tpd_config *c = load_ok(peers_conf);
	struct sockaddr_storage ss = sa(match_cases[_i].addr);
	const struct peer_profile *pp = config_match_peer(c, (struct sockaddr *)&ss);

	ck_assert_ptr_nonnull(pp);
	ck_assert_msg(strcmp(pp->name, match_cases[_i].peer) == 0, "%s matched %s, not %s",
		      match_cases[_i].addr, pp->name, match_cases[_i].peer);
	config_free(c);
}
END_TEST

START_TEST(test_match_default)
{
	struct l2tpd_config *c = load_ok(
		"peers = ( { name = \"ten\"; match = \"10.0.0.0/8\"; },\n"
		"  { name = \"six\"; match = \"2001:db8::/32\"; } );\n");
	struct sockaddr_storage ss;
	struct {
		sa_family_t f;
		char p[20];
	} un = { AF_UNIX, "x" };

	ss = sa("10.0.0.1");
	ck_assert_str_eq(config_match_peer(c, (struct sockaddr *)&ss)->name, "ten");
	ss = sa("11.0.0.1");
	ck_assert_ptr_eq(config_match_peer(c, (struct sockaddr *)&ss), &c->peer_default);
	ss = sa("2001:db9::1");
	ck_assert_ptr_eq(config_match_peer(c, (struct sockaddr *)&ss), &c->peer_default);
	ck_assert_ptr_eq(config_match_peer(c, NULL), &c->peer_default);
	ck_assert_ptr_eq(config_match_peer(c, (struct sockaddr *)&un), &c->peer_default);
	ck_assert(!config_match_peer(c, NULL)->accept);
	config_free(c);

	/* no peers at all */
	c = config_defaults();
	ss = sa("10.0.0.1");
	ck_assert_ptr_eq(config_match_peer(c, (struct sockaddr *)&ss), &c->peer_default);
	config_free(c);
}
END_TEST

/* ---- addresses ---- */

static const struct {
	const char *in;
	uint16_t dflt;
	const char *out;	/* config_addr_str(), NULL: rejected */
} addr_cases[] = {
	{ "1.2.3.4", 0, "1.2.3.4" },
	{ "1.2.3.4", 1701, "1.2.3.4:1701" },
	{ "1.2.3.4:1702", 1701, "1.2.3.4:1702" },
	{ "0.0.0.0", 0, "0.0.0.0" },
	{ "2001:db8::1", 0, "2001:db8::1" },
	{ "2001:DB8:0:0::1", 9, "[2001:db8::1]:9" },
	{ "[2001:db8::1]:1701", 0, "[2001:db8::1]:1701" },
	{ "[2001:db8::1]", 0, "2001:db8::1" },
	{ "::", 1701, "[::]:1701" },
	{ "::ffff:1.2.3.4", 0, "::ffff:1.2.3.4" },
	{ "[::1]:65535", 0, "[::1]:65535" },
	{ "", 0, NULL },
	{ "1.2.3", 0, NULL },
	{ "1.2.3.256", 0, NULL },
	{ "01.2.3.4", 0, NULL },
	{ "1.2.3.4:", 0, NULL },
	{ "1.2.3.4:0", 0, NULL },
	{ "1.2.3.4:65536", 0, NULL },
	{ "1.2.3.4:17a", 0, NULL },
	{ "1.2.3.4:-1", 0, NULL },
	{ " 1.2.3.4", 0, NULL },
	{ "[1.2.3.4]:1701", 0, NULL },
	{ "[2001:db8::1", 0, NULL },
	{ "[2001:db8::1]1701", 0, NULL },
	{ "2001:db8::1:1701:", 0, NULL },
	{ "host.example.com", 0, NULL },
	{ "host.example.com:1701", 0, NULL },
	{ "fe80::1%eth0", 0, NULL },
};

START_TEST(test_parse_addr)
{
	struct cfg_addr a;
	char buf[CFG_ADDR_STRLEN];
	bool ok = config_parse_addr(addr_cases[_i].in, addr_cases[_i].dflt, &a);

	if (!addr_cases[_i].out) {
		ck_assert_msg(!ok, "'%s' accepted", addr_cases[_i].in);
		return;
	}
	ck_assert_msg(ok, "'%s' rejected", addr_cases[_i].in);
	ck_assert_str_eq(config_addr_str(&a, buf, sizeof(buf)), addr_cases[_i].out);
	if (a.ss.ss_family == AF_INET)
		ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in));
	else
		ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in6));
}
END_TEST

static const struct {
	const char *in;
	const char *out;	/* NULL: rejected */
} prefix_cases[] = {
	{ "any", "any" },
	{ "ANY", "any" },
	{ "10.0.0.0/8", "10.0.0.0/8" },
	{ "10.1.2.3", "10.1.2.3/32" },
	{ "0.0.0.0/0", "0.0.0.0/0" },
	{ "10.2.0.0/15", "10.2.0.0/15" },
	{ "2001:DB8::/32", "2001:db8::/32" },
	{ "::/0", "::/0" },
	{ "2001:db8::1", "2001:db8::1/128" },
	{ "10.3.0.0/15", NULL },	/* host bit */
	{ "10.0.0.0/33", NULL },
	{ "10.0.0.0/", NULL },
	{ "10.0.0.0/8x", NULL },
	{ "2001:db8::/129", NULL },
	{ "/8", NULL },
	{ "", NULL },
	{ "none", NULL },
};

START_TEST(test_parse_prefix)
{
	struct cfg_prefix p;
	char buf[64];
	bool ok = config_parse_prefix(prefix_cases[_i].in, &p);

	if (!prefix_cases[_i].out) {
		ck_assert_msg(!ok, "'%s' accepted", prefix_cases[_i].in);
		return;
	}
	ck_assert_msg(ok, "'%s' rejected", prefix_cases[_i].in);
	ck_assert_str_eq(config_prefix_str(&p, buf, sizeof(buf)), prefix_cases[_i].out);
}
END_TEST

/* ---- names ---- */

START_TEST(test_names)
{
	static const uint16_t pws[] = { L2TP_PW_ETH, L2TP_PW_ETH_VLAN, L2TP_PW_PPP,
					L2TP_PW_PPP_AC, L2TP_PW_IP };
	unsigned i;

	for (i = 0; i < sizeof(pws) / sizeof(pws[0]); i++)
		ck_assert_int_eq(config_pw_type_parse(config_pw_type_name(pws[i])), pws[i]);
	ck_assert_str_eq(config_pw_type_name(L2TP_PW_ETH), "eth");
	ck_assert_str_eq(config_pw_type_name(0x1234), "unknown");
	ck_assert_int_eq(config_pw_type_parse("frame-relay"), -1);
	ck_assert_int_eq(config_pw_type_parse(NULL), -1);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(config_data_seq_parse(config_data_seq_name((uint16_t)i)), (int)i);
	ck_assert_str_eq(config_data_seq_name(1), "non-ip");
	ck_assert_str_eq(config_data_seq_name(9), "unknown");
	ck_assert_int_eq(config_data_seq_parse("some"), -1);
	ck_assert_str_eq(config_digest_name(CFG_DIGEST_NONE), "none");
	ck_assert_str_eq(config_digest_name(CFG_DIGEST_MD5), "md5");
	ck_assert_str_eq(config_digest_name(CFG_DIGEST_SHA1), "sha1");
}
END_TEST

/* ---- printing ---- */

START_TEST(test_fixed_point)
{
	struct l2tpd_config *c = config_defaults();

	assert_fixed_point(c);
	config_free(c);
	c = load_ok(peers_conf);
	assert_fixed_point(c);
	config_free(c);
	c = load_ok("tunnel_profiles = ( { name = \"t\"; retransmit_initial = 0.1234;\n"
		    "  retransmit_cap = 1.0126; delayed_ack = 0.001; hello_interval = 86400; } );\n"
		    "session_profiles = ( { name = \"s\"; address = \"10.0.0.1\"; } );\n");
	ck_assert_uint_eq(c->tunnel_profiles[1].retransmit_initial_ms, 123);
	ck_assert_uint_eq(c->tunnel_profiles[1].retransmit_cap_ms, 1013);
	ck_assert_uint_eq(c->tunnel_profiles[1].delayed_ack_ms, 1);
	ck_assert_str_eq(c->session_profiles[1].address, "10.0.0.1/32");
	assert_fixed_point(c);
	config_free(c);
}
END_TEST

static void collect(const config_setting_t *s, const char *prefix, char **seen, unsigned *n)
{
	char path[128];
	int i;

	for (i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *name = config_setting_name(e);
		unsigned j;

		if (!name) {			/* a group in a list: same prefix */
			if (config_setting_is_group(e))
				collect(e, prefix, seen, n);
			continue;
		}
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", name);
		if (*prefix) {
			for (j = 0; j < *n && strcmp(seen[j], path); j++)
				;
			if (j == *n)
				seen[(*n)++] = strdup(path);
		}
		if (config_setting_is_group(e) || config_setting_is_list(e))
			collect(e, path, seen, n);
	}
}

/* Exact entries first, then patterns in order; the peer's bytes are matched as bytes. */
START_TEST(test_match_session)
{
	struct l2tpd_config *c = load_ok(full_conf);
	const struct peer_profile *pp = config_peer_by_name(c, "core");
	const struct session_match *m;

	ck_assert_ptr_nonnull(pp);
	ck_assert(pp->refuse_unknown_sessions);
	ck_assert_uint_eq(pp->n_sessions, 2);
	m = config_match_session(pp, (const uint8_t *)"cust-gold", 9);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->ifname, "gold");	/* exact beats the earlier pattern */
	ck_assert_str_eq(m->bridge, "br0");
	m = config_match_session(pp, (const uint8_t *)"cust-7", 6);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->ifname, "c-%r");
	ck_assert_str_eq(m->profile, "ppp");
	ck_assert_ptr_null(config_match_session(pp, (const uint8_t *)"cust-\0x", 7));
	ck_assert_ptr_null(config_match_session(pp, (const uint8_t *)"other", 5));
	ck_assert_ptr_null(config_match_session(pp, (const uint8_t *)"", 0));
	ck_assert_ptr_eq(config_peer_by_name(c, "default"), &c->peer_default);
	ck_assert_ptr_null(config_peer_by_name(c, "nope"));
	config_free(c);
}
END_TEST

/* config_known_settings is exactly what config_print() writes (and so what the parser takes). */
START_TEST(test_known_settings)
{
	struct l2tpd_config *c = load_ok(full_conf);
	char *text = print_str(c), *seen[256];
	unsigned n = 0, i, j;
	config_t lc;

	config_init(&lc);
	ck_assert_msg(config_read_string(&lc, text) == CONFIG_TRUE, "printed config unreadable: %s",
		      config_error_text(&lc));
	collect(config_root_setting(&lc), "", seen, &n);
	for (i = 0; i < n; i++) {
		for (j = 0; config_known_settings[j]; j++)
			if (!strcmp(config_known_settings[j], seen[i]))
				break;
		ck_assert_msg(config_known_settings[j] != NULL, "printed '%s' is not known", seen[i]);
	}
	for (j = 0; config_known_settings[j]; j++) {
		for (i = 0; i < n; i++)
			if (!strcmp(config_known_settings[j], seen[i]))
				break;
		ck_assert_msg(i < n, "known '%s' is not printed", config_known_settings[j]);
	}
	ck_assert_uint_eq(j, n);
	for (i = 0; i < n; i++)
		free(seen[i]);
	config_destroy(&lc);
	free(text);
	config_free(c);
}
END_TEST

/*
 * The example shipped in etc/ loads as it is, and is harmless until an
 * operator enables its commented parts: no peer accepted, no tunnel opened,
 * no secret that someone could know from reading this file.
 */
START_TEST(test_example)
{
	char path[512], err[1024];
	struct l2tpd_config *c = config_load(example_path(path, sizeof(path)), err, sizeof(err));
	unsigned i;

	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->n_peers, 0);
	ck_assert(!c->peer_default.accept);
	ck_assert_uint_eq(c->n_tunnels, 0);
	ck_assert_str_eq(c->secret, "");
	for (i = 0; i < c->n_tunnel_profiles; i++)
		ck_assert_str_eq(c->tunnel_profiles[i].secret, "");
	assert_fixed_point(c);
	config_free(c);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("defaults");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_empty_file_is_defaults);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, test_snmp_enabled);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_include);
	tcase_add_test(tc, test_secret_file);
	tcase_add_test(tc, test_include_dir);
	suite_add_tcase(s, tc);

	tc = tcase_create("good");
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_inheritance);
	tcase_add_test(tc, test_builtin_default);
	tcase_add_test(tc, test_global_values);
	tcase_add_test(tc, test_peer_secret);
	tcase_add_test(tc, test_example);
	suite_add_tcase(s, tc);

	tc = tcase_create("match");
	tcase_add_loop_test(tc, test_match_peer, 0,
			    (int)(sizeof(match_cases) / sizeof(match_cases[0])));
	tcase_add_test(tc, test_match_default);
	suite_add_tcase(s, tc);

	tc = tcase_create("addresses");
	tcase_add_loop_test(tc, test_parse_addr, 0, (int)(sizeof(addr_cases) / sizeof(addr_cases[0])));
	tcase_add_loop_test(tc, test_parse_prefix, 0,
			    (int)(sizeof(prefix_cases) / sizeof(prefix_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("print");
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_fixed_point);
	tcase_add_test(tc, test_known_settings);
	tcase_add_test(tc, test_match_session);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
