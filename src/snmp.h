/*
 * src/snmp.h - the AgentX subagent (L2TPV3D-MIB), built with --with-snmp.
 *
 * The names carry "snmpagent_" rather than "snmp_": net-snmp already
 * exports snmp_shutdown() and many more snmp_* symbols, and the daemon
 * links with it.
 *
 * Without HAVE_SNMP every call is an empty inline, so tunnel.c, session.c
 * and main.c call these unconditionally.
 */
#ifndef L2TPD_SNMP_H
#define L2TPD_SNMP_H

struct l2tpd_config;
struct l2tp_result;
struct session;
struct tunnel;

#ifdef HAVE_SNMP

/*
 * Starts the subagent when c->snmp.enabled: connects to the master at
 * c->snmp.agentx_socket, or keeps retrying in the background when it is
 * not there.  Never fails the daemon: returns -1 (logged) only when
 * net-snmp itself cannot be set up.  Call after modules_init().
 */
int snmpagent_init(const struct l2tpd_config *c);
/* Closes the AgentX session and releases net-snmp (at exit). */
void snmpagent_shutdown(void);

/*
 * Index maintenance for the ordered walks: a tunnel once it is in the
 * daemon's indexes with its config_id, until it leaves them; a session from
 * its creation until it is freed.
 */
void snmpagent_tunnel_added(struct tunnel *t);
void snmpagent_tunnel_removed(struct tunnel *t);
void snmpagent_session_added(struct session *s);
void snmpagent_session_removed(struct session *s);

/* l2tpv3dTunnelUp / l2tpv3dTunnelDown notifications (why may be NULL). */
void snmpagent_notify_tunnel_up(const struct tunnel *t);
void snmpagent_notify_tunnel_down(const struct tunnel *t, const struct l2tp_result *why);

#else

static inline int snmpagent_init(const struct l2tpd_config *c) { (void)c; return 0; }
static inline void snmpagent_shutdown(void) { }
static inline void snmpagent_tunnel_added(struct tunnel *t) { (void)t; }
static inline void snmpagent_tunnel_removed(struct tunnel *t) { (void)t; }
static inline void snmpagent_session_added(struct session *s) { (void)s; }
static inline void snmpagent_session_removed(struct session *s) { (void)s; }
static inline void snmpagent_notify_tunnel_up(const struct tunnel *t) { (void)t; }
static inline void snmpagent_notify_tunnel_down(const struct tunnel *t,
					       const struct l2tp_result *why)
{
	(void)t;
	(void)why;
}

#endif

#endif
