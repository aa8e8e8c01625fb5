/*
 * src/config.h - l2tpv3d configuration: what the file says, parsed into a
 * fresh struct (never into the running one), checked, then applied.
 *
 * Profiles inherit: every tunnel/session profile starts as a copy of the
 * profile named "default" (itself starting from built-in defaults), then
 * applies its own settings.  Peer profiles match incoming SCCRQs by
 * address/prefix, longest prefix first.
 */
#ifndef L2TPD_CONFIG_H
#define L2TPD_CONFIG_H

#include <netinet/in.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include "proto/msg.h"

#define CFG_NAME_MAX	64
#define CFG_PATH_MAX	256
#define CFG_SECRET_MAX	128
#define CFG_DESC_MAX	128	/* an object's description: operator text, printable */
#define CFG_MAX_LISTEN	16

/* An IPv4/IPv6 address with optional port (0 = default). */
struct cfg_addr {
	struct sockaddr_storage ss;	/* AF_INET or AF_INET6; port in network order */
	socklen_t len;
};

struct cfg_prefix {
	int family;			/* AF_INET, AF_INET6, or AF_UNSPEC for "any" */
	uint8_t addr[16];
	uint8_t plen;
};

enum cfg_digest { CFG_DIGEST_NONE = 0, CFG_DIGEST_MD5, CFG_DIGEST_SHA1 };
/* auto: ephemeral, and the shared listener port once no ephemeral port is free */
enum cfg_sport { CFG_SPORT_1701 = 0, CFG_SPORT_EPHEMERAL, CFG_SPORT_AUTO };
/* The DF bit and path MTU discovery of a tunnel's socket (IP_MTU_DISCOVER) */
enum cfg_df { CFG_DF_SYSTEM = 0, CFG_DF_ON, CFG_DF_OFF, CFG_DF_PMTU };

struct tunnel_profile {
	char name[CFG_NAME_MAX];
	enum l2tp_encap encap;			/* "udp" (default) | "ip" */
	enum cfg_sport udp_src_port;		/* "1701" | "ephemeral" (default) */
	uint16_t udp_port;			/* peer port, default 1701 */
	uint32_t hello_interval_ms;		/* default 60000 */
	uint32_t setup_timeout_ms;		/* to established at most; default 60000, 0 off */
	uint32_t session_setup_timeout_ms;	/* a session to established at most; default 60000 */
	uint32_t retransmit_initial_ms;		/* default 1000 */
	uint32_t retransmit_cap_ms;		/* default 8000 */
	uint32_t max_retries;			/* default 10 */
	uint32_t sccrq_max_retries;		/* default = max_retries */
	uint32_t sccrp_max_retries;		/* default 4: our SCCRP to a peer that may be forged */
	uint32_t delayed_ack_ms;		/* default 100 */
	uint16_t rx_window;			/* default 16 */
	uint16_t send_window;			/* cap on ours; default 0: the peer's window */
	enum cfg_digest digest;			/* "none" | "md5" | "sha1" */
	char secret[CFG_SECRET_MAX];		/* empty: the global secret */
	char secret_file[CFG_PATH_MAX];		/* where secret was read from; "": inline */
	char description[CFG_DESC_MAX];
	bool hide_avps;				/* hide sensitive AVPs (needs secret + digest) */
	bool send_ack_msg;			/* explicit ACK(20) instead of ZLB */
	uint32_t max_sessions;			/* default 0: global limit */
	/* the tunnel's socket: control messages and the kernel's data packets */
	uint8_t dscp;				/* IP_TOS / IPV6_TCLASS >> 2; default 0 */
	uint8_t ttl;				/* TTL / hop limit; 0 (default): the system's */
	uint16_t df;				/* enum cfg_df: "system" (default) | "on" | ... */
	char bind_device[CFG_NAME_MAX];		/* SO_BINDTODEVICE: a VRF or a device; "": none */
	/* RFC 4951: advertise failover, ask the peer to keep us recovery_time_ms more */
	bool failover;				/* default false */
	uint32_t recovery_time_ms;		/* default 30000 */
};

/* An IPv6 link-local address on a session's interface (doc/kernel-dataplane.md). */
enum cfg_ll6 { CFG_LL6_AUTO = 0, CFG_LL6_ON, CFG_LL6_OFF };

struct session_profile {
	char name[CFG_NAME_MAX];
	uint16_t pw_type;			/* "eth" (default) | "eth_vlan" | "ppp" */
	uint8_t cookie_len;			/* 0, 4, 8 (default 0) */
	uint16_t l2spec;			/* "none" (default) | "default" */
	uint16_t data_seq;			/* "none" | "non-ip" | "all" */
	char ifname[CFG_NAME_MAX];		/* pattern, "%d" replaced; default "l2tpeth%d" */
	uint32_t mtu;				/* 0: derived from the path MTU */
	char bridge[CFG_NAME_MAX];		/* enslave to this bridge when set */
	char address[64];			/* "a.b.c.d/len" or v6 to configure, optional */
	uint16_t ipv6_link_local;		/* enum cfg_ll6: "auto" (only with address) | "on" | "off" */
	uint16_t vlan_id;			/* eth_vlan: sub-interface VLAN id */
	char pppd_options[CFG_PATH_MAX];	/* ppp: extra pppd arguments */
	char description[CFG_DESC_MAX];
};

/*
 * An incoming session tied to a customer by its Remote End ID (an
 * xconnect): exact, or a pattern with '*' and '?'.  Empty strings leave
 * the session profile's setting.
 */
struct session_match {
	char remote_end_id[CFG_NAME_MAX];
	char profile[CFG_NAME_MAX];		/* "" : the peer entry's session_profile */
	char ifname[CFG_NAME_MAX];		/* "%r": the Remote End ID, "%d": a number */
	char bridge[CFG_NAME_MAX];
};

struct peer_profile {
	char name[CFG_NAME_MAX];
	struct cfg_prefix match;
	bool accept;				/* incoming SCCRQs allowed */
	char tunnel_profile[CFG_NAME_MAX];
	char session_profile[CFG_NAME_MAX];
	char secret[CFG_SECRET_MAX];		/* overrides the tunnel profile's */
	char secret_file[CFG_PATH_MAX];		/* where secret was read from; "": inline */
	char description[CFG_DESC_MAX];
	struct session_match *sessions;		/* first exact match, else first pattern */
	unsigned n_sessions;
	bool refuse_unknown_sessions;		/* a Remote End ID no entry matches: CDN */
	uint32_t max_tunnels;			/* the entry's connections at most; 0: no own limit */
	uint32_t max_sessions;			/* its sessions, all tunnels together; 0: none */
};

#define CFG_MAX_BACKUPS	4

struct static_session {
	char name[CFG_NAME_MAX];
	char profile[CFG_NAME_MAX];
	char remote_end_id[CFG_NAME_MAX];
	char ifname[CFG_NAME_MAX];		/* "": the profile's */
	/*
	 * Pseudowire redundancy: static tunnels to bring the session up
	 * through, in order, when its own tunnel is down or refuses it; back
	 * to its own tunnel once that has been up revert_delay (unless
	 * revert is false).
	 */
	char backup[CFG_MAX_BACKUPS][CFG_NAME_MAX];
	unsigned n_backup;
	uint32_t revert_delay_ms;		/* default 30 s */
	bool revert;				/* default true */
	bool shutdown;				/* administratively down: not started */
	char description[CFG_DESC_MAX];
};

struct static_tunnel {
	char name[CFG_NAME_MAX];
	struct cfg_addr peer;			/* family AF_UNSPEC when the tunnel names a pool */
	char pool[CFG_NAME_MAX];		/* an lns_pools entry, or "" (peer is set) */
	struct cfg_addr local;			/* family AF_UNSPEC when unset */
	char profile[CFG_NAME_MAX];
	struct static_session *sessions;
	unsigned n_sessions;
	bool shutdown;				/* administratively down: not started */
	char description[CFG_DESC_MAX];
};

/*
 * An LNS pool (doc/failover.md): a tunnel through it goes to the member
 * with the fewest of our tunnels per weight; a member whose tunnel fails
 * is skipped for hold_down.
 */
struct lns_pool_member {
	struct cfg_addr address;		/* port 0: the tunnel profile's udp_port */
	uint32_t weight;			/* 1..1000, default 1 */
};

struct lns_pool {
	char name[CFG_NAME_MAX];
	struct lns_pool_member *members;
	unsigned n_members;
	uint32_t hold_down_ms;			/* default 60 s; 0: none */
};

struct hook_config {
	char tunnel_up[CFG_PATH_MAX];
	char tunnel_down[CFG_PATH_MAX];
	char session_up[CFG_PATH_MAX];
	char session_down[CFG_PATH_MAX];
	uint32_t max_concurrent;		/* default 8 */
	uint32_t timeout_ms;			/* default 30000: a hook running longer is killed */
};

struct snmp_config {
	bool enabled;
	char agentx_socket[CFG_PATH_MAX];
};

struct l2tpd_config {
	char path[CFG_PATH_MAX];		/* file it came from */

	/* global */
	struct cfg_addr listen[CFG_MAX_LISTEN];	/* default 0.0.0.0 and :: */
	unsigned n_listen;
	uint16_t udp_port;			/* default 1701 */
	bool listen_ip;				/* also listen for L2TP over IP (proto 115) */
	enum cfg_sport responder_port;		/* "auto" (default) | "listener" | "ephemeral" */
	/*
	 * A reload and the tunnels and sessions peers opened under the old
	 * configuration: cleared when the new one would not accept them as
	 * they are ("clear", default), or only listed in the summary ("report").
	 */
	enum cfg_reload_peers { CFG_RELOAD_PEERS_CLEAR, CFG_RELOAD_PEERS_REPORT } reload_peers;
	char event_loop[16];			/* "epoll" (default) | "poll" */
	char hostname[CFG_NAME_MAX];		/* default: gethostname() */
	uint32_t router_id;			/* 0: derived from a local address */
	bool router_id_set;
	char secret[CFG_SECRET_MAX];
	char secret_file[CFG_PATH_MAX];		/* where secret was read from; "": inline */
	/*
	 * A directory whose *.conf files (file-name order) add to the lists
	 * tunnel_profiles, session_profiles, peers and tunnels; relative to
	 * the main file's directory.  The lists hold what they added.
	 */
	char include_dir[CFG_PATH_MAX];
	char (*included)[CFG_PATH_MAX];		/* the files read from it, in order */
	unsigned n_included;
	uint32_t max_tunnels;			/* default 100000 */
	uint32_t max_sessions;			/* default 200000 */
	uint32_t max_sessions_per_tunnel;	/* default 0 (unlimited) */
	uint32_t max_half_open;			/* default 1000: SCCRQ flood guard */
	uint32_t reserved_tunnels;		/* of max_tunnels, kept from peer_default's peers */
	bool snmp_config_id;			/* default false */
	char ctl_socket[CFG_PATH_MAX];		/* default RUNSTATEDIR "/l2tpv3d/l2tpv3d.ctl" */
	char ctl_group[CFG_NAME_MAX];		/* empty: the daemon's group */
	uint32_t ctl_max_clients;		/* default 64: control connections at once */
	uint32_t ctl_max_output;		/* default 16 MiB: unread output before a drop */
	uint32_t ctl_idle_timeout;		/* default 300 s: an idle client (not a monitor) is closed */
	char log_level[16];			/* "err" | "warn" | "info" (default) | "debug" */
	char dataplane[16];			/* "kernel" (default) | "null" */
	char state_dir[CFG_PATH_MAX];		/* default RUNSTATEDIR "/l2tpv3d" */
	char metrics_listen[64];		/* "ADDR:PORT" for /metrics; "" (default): off */
	/* an active/standby pair (ha.c): the failover record to the peer box, and from it */
	char ha_listen[64];			/* "ADDR:PORT": take the peer's record; "": off */
	char ha_peer[64];			/* "ADDR:PORT": send ours; "": off */
	char ha_secret[CFG_SECRET_MAX];		/* HMAC-SHA256 key of the records; required with either */
	bool metrics_session_counters;		/* default true: sessions' data-plane counters */
	char (*reserved_ifnames)[CFG_NAME_MAX];	/* sorted: the interface names the file names */
	unsigned n_reserved_ifnames;

	struct tunnel_profile *tunnel_profiles;	/* [0] is "default" */
	unsigned n_tunnel_profiles;
	struct session_profile *session_profiles;	/* [0] is "default" */
	unsigned n_session_profiles;
	struct peer_profile *peers;
	unsigned n_peers;
	struct peer_profile peer_default;	/* unmatched peers: accept = false by default */
	struct lns_pool *lns_pools;
	unsigned n_lns_pools;
	struct static_tunnel *tunnels;
	unsigned n_tunnels;
	struct hook_config hooks;
	struct snmp_config snmp;
};

/* config.c */
/*
 * Parses path into a new config.  On error returns NULL and writes
 * "FILE:LINE: setting 'x': what is wrong" into err.
 */
struct l2tpd_config *config_load(const char *path, char *err, size_t errlen);
/* A config with every built-in default (no file). */
struct l2tpd_config *config_defaults(void);
void config_free(struct l2tpd_config *c);
/* Writes the normalised config (every setting, defaults included) in libconfig syntax. */
void config_print(const struct l2tpd_config *c, FILE *out);
/* config_print() shows secrets (else "********" for a non-empty one). */
void config_print_secrets(bool show);
/*
 * Checks a file the configuration reads besides the main one (an
 * include_dir and its files) as the daemon checks the main one: 0, or -1
 * with the reason in why.  NULL (the default, and `-n`): no check.
 */
typedef int (*config_trust_fn)(const char *what, const char *path, char *why, size_t len);
void config_set_trust_check(config_trust_fn fn);

const struct tunnel_profile *config_tunnel_profile(const struct l2tpd_config *c, const char *name);
/* The static tunnel of that name, or NULL. */
const struct static_tunnel *config_static_tunnel(const struct l2tpd_config *c, const char *name);
/* The session of that name in static tunnel st, or NULL. */
const struct static_session *config_static_session(const struct static_tunnel *st,
						   const char *name);
const struct session_profile *config_session_profile(const struct l2tpd_config *c, const char *name);
const struct lns_pool *config_lns_pool(const struct l2tpd_config *c, const char *name);
/*
 * True when member m of a pool is the destination a (a tunnel's, port set):
 * the same address, and the same port unless m leaves it to the profile.
 */
bool config_pool_member_is(const struct lns_pool_member *m, const struct sockaddr *a);
/* The entry of pp for an incoming session's Remote End ID (len bytes), or NULL. */
const struct session_match *config_match_session(const struct peer_profile *pp,
						 const uint8_t *reid, size_t len);
/*
 * True when name is an interface name the configuration gives literally (a
 * session profile's, a peers entry's session's or a static session's, with
 * no "%d" or "%r"): a name made from a peer's Remote End ID must not take it.
 */
bool config_ifname_reserved(const struct l2tpd_config *c, const char *name);
/* The peer entry called name ("default": peer_default), or NULL. */
const struct peer_profile *config_peer_by_name(const struct l2tpd_config *c, const char *name);
/* The most specific peer profile matching addr, or &c->peer_default. */
const struct peer_profile *config_match_peer(const struct l2tpd_config *c,
					     const struct sockaddr *addr);
/* Parses "a.b.c.d", "[v6]:port", "v6", "a.b.c.d:port" into a; false on error. */
bool config_parse_addr(const char *s, uint16_t default_port, struct cfg_addr *a);
/*
 * Parses "any", "a.b.c.d[/len]" or "v6[/len]" (no length: a host prefix);
 * false on error, including host bits set beyond len.
 */
bool config_parse_prefix(const char *s, struct cfg_prefix *p);

/* Room for any address config_addr_str() writes: "[v6]:65535" and the NUL. */
#define CFG_ADDR_STRLEN	(INET6_ADDRSTRLEN + 8)
/* "192.0.2.1", "192.0.2.1:1701", "2001:db8::1", "[2001:db8::1]:1701" (port shown when not 0). */
const char *config_addr_str(const struct cfg_addr *a, char *buf, size_t len);
/* "any", "192.0.2.0/24", "2001:db8::/32". */
const char *config_prefix_str(const struct cfg_prefix *p, char *buf, size_t len);
/* The secret in effect: the peer's (peer may be NULL), else the profile's, else the global one; "" if none. */
const char *config_secret(const struct l2tpd_config *c, const struct tunnel_profile *tp,
			  const struct peer_profile *peer);

/* Names for printing and parsing (the CLI uses them too). */
const char *config_digest_name(enum cfg_digest d);
const char *config_df_name(enum cfg_df df);
const char *config_pw_type_name(uint16_t pw);
int config_pw_type_parse(const char *s);		/* -1 when unknown */
const char *config_data_seq_name(uint16_t s);
int config_data_seq_parse(const char *s);

/* Settings the parser accepts, NULL-terminated, "section.setting" (man page test). */
extern const char *const config_known_settings[];

/*
 * config_carry.c: the configuration as text that stands on its own (what a
 * restart hands to the next process): config_print() with every secret in
 * it and a secret_file's content in place of its path.  malloc'd, *len
 * bytes; NULL when out of memory.  Secrets are hidden from config_print()
 * afterwards.
 */
char *config_carry_text(const struct l2tpd_config *c, size_t *len);
/* Parses text as config_load() parses a file; name (if not NULL) becomes c->path. */
struct l2tpd_config *config_load_text(const char *text, size_t len, const char *name,
				      char *err, size_t errlen);

#endif
