/*
 * src/cli/cli.h - l2tpv3ctl internals shared by its files.
 *
 * The client is split the way bgpctl is: parse.c turns words into a request
 * (token tables), conn.c speaks the line protocol of doc/ctl-protocol.md,
 * output.c / output_json.c print replies through one vtable, batch.c
 * pipelines many requests over one connection, l2tpv3ctl.c ties them up.
 */
#ifndef L2TPD_CLI_H
#define L2TPD_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define CLI_NAME	"l2tpv3ctl"
#define CLI_ERRLEN	512		/* one diagnostic line */
#define CLI_MAX_WORDS	64		/* words in one command (batch lines too) */

/* Exit statuses, the same in every mode so scripts can tell them apart. */
#define EXIT_FAIL	1	/* unreachable daemon, timeout, refused command */
#define EXIT_USAGE	2	/* bad command line or batch line, invalid-argument */

/* What the text output needs to know about a command beyond its name. */
enum cmd_kind {
	CMD_TUNNEL_CREATE,
	CMD_TUNNEL_DELETE,
	CMD_TUNNEL_SHOW,
	CMD_TUNNEL_LIST,
	CMD_SESSION_CREATE,
	CMD_SESSION_DELETE,
	CMD_SESSION_SHOW,
	CMD_SESSION_LIST,
	CMD_SHOW_DAEMON,
	CMD_STATS,
	CMD_STATS_RESET,
	CMD_METRICS,
	CMD_RELOAD,
	CMD_RESTART,
	CMD_FAILOVER_TAKEOVER,
	CMD_DEBUG_ON,
	CMD_DEBUG_OFF,
	CMD_MONITOR,
	CMD__COUNT
};

/* A parsed command: what goes on the wire and how to print its reply. */
struct request {
	enum cmd_kind kind;
	const char *cmd;		/* protocol name, e.g. "tunnel create" */
	json_object *args;		/* owned; an empty object when none */
	json_object *client;		/* owned; the client's own switches, not sent */
};

/* One decoded line from the daemon; every pointer borrows from root. */
struct reply {
	json_object *root;
	int64_t id;
	int status;
	const char *status_name;	/* the daemon's, or ours when absent */
	const char *error;		/* NULL when absent */
	json_object *data;		/* NULL when absent */
	json_object *event;		/* monitor event lines only */
};

/* A byte queue: bytes [off, len) are pending; scan caches the newline search. */
struct buf {
	char *data;
	size_t off, len, cap, scan;
};

/* One connection to l2tpv3d, always non-blocking. */
struct conn {
	int fd;
	bool eof;			/* nothing more will come in */
	int err;			/* why: 0 the daemon closed, else an errno */
	bool quiet;			/* requests ask for their status alone on success */
	struct buf in, out;
};

/*
 * The output vtable: text tables or -j JSON, chosen once in main() so no
 * printing code asks "is this JSON?".
 */
struct output {
	/* Single command: the final reply, whatever its status. */
	void (*result)(const struct request *, const struct reply *);
	/* Batch: one reply, tagged with its input line. */
	void (*batch_reply)(unsigned long line, const struct request *, const struct reply *);
	/* Batch: a line that did not parse (already reported on stderr). */
	void (*batch_error)(unsigned long line, const char *msg);
	/* Batch, -q: the counts at the end (successes print nothing). */
	void (*batch_summary)(unsigned long commands, unsigned long failed);
	/* Monitor: one event object. */
	void (*event)(json_object *ev);
	/* Monitor: subscribed again after the daemon went away (events may be missed). */
	void (*reconnected)(void);
};

/* util.c: below every other part */
void	cli_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	*xmalloc(size_t n);
void	*xrealloc(void *p, size_t n);
char	*xstrdup(const char *s);
double	mono_now(void);
double	wall_now(void);
int	exit_status(int status);

/* parse.c */
int	parse_command(int argc, char *const argv[], struct request *req,
		      char *err, size_t errlen);
void	request_free(struct request *req);
bool	request_switch(const struct request *req, const char *key);
int	split_words(char *line, char **words, int max, char *err, size_t errlen);
/* A batch: `secret -` is refused (standard input may hold the commands). */
void	parse_stdin_taken(void);

/* conn.c */
void	buf_append(struct buf *b, const void *p, size_t n);
char	*buf_line(struct buf *b);
size_t	buf_pending(const struct buf *b);
int	buf_read(struct buf *b, int fd);
void	buf_free(struct buf *b);
int	conn_open(struct conn *c, const char *path, double timeout);
void	conn_close(struct conn *c);
void	conn_send(struct conn *c, const struct request *req, int64_t id);
int	conn_flush(struct conn *c);
int	conn_fill(struct conn *c);
char	*conn_wait_line(struct conn *c, double deadline);
int	reply_parse(const char *line, struct reply *r);
void	conn_report_error(int err, double timeout);

/* output.c */
extern const struct output output_text;
void	print_failure(const struct reply *r);

/* output_json.c */
extern const struct output output_json;

/* batch.c */
int	batch_run(struct conn *c, int in_fd, const struct output *out,
		  unsigned window, double timeout, bool quiet);

#endif
