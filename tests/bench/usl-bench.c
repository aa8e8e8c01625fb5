/*
 * tests/bench/usl-bench.c - the usl timer set (rbtree) against a sorted
 * doubly linked list, the structure many daemons use for timers.
 *
 * For each n, with random expiries:
 *   arm     arming n timers into an empty set, per timer;
 *   cancel  cancelling all n in random order, per timer;
 *   first   finding the earliest expiry with n armed;
 *   rearm   moving a random armed timer to a new random expiry, n armed.
 * The list's arm and rearm are O(n) each, so for large n they are timed on
 * a bounded sample: arms into a list of n/2 timers (the mean size during a
 * full build) and re-arms in a list of n.  Each size is run REPS times and
 * the fastest figure kept, to damp noise from other work on the machine.
 *
 * usage: usl-bench [-q] [-o DIR] [-g GNUPLOT_SCRIPT]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "usl/list.h"
#include "usl/timer.h"

#ifndef USL_BENCH_GP
#define USL_BENCH_GP "tests/bench/usl-bench.gp"
#endif

/* Expiries spread over one second, in ns, like a busy daemon's timers. */
#define EXPIRY_RANGE	1000000000ULL
/* Target operations per rbtree measurement, so small n are not noise. */
#define RB_TARGET_OPS	400000
/* List node visits allowed per sampled measurement (bounds O(n) ops). */
#define LIST_VISIT_BUDGET	50000000ULL
#define PATH_BUF	2048
/* Full list builds (no sampling) up to this n. */
#define LIST_FULL_BUILD_MAX	10000

struct result {
	size_t n;
	double rb_arm, rb_cancel, rb_first, rb_rearm;
	double list_arm, list_cancel, list_first, list_rearm;
};

static uint64_t rng_state = 0x5eed;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int64_t rand_expiry(void)
{
	return (int64_t)(rng() % EXPIRY_RANGE);
}

static void shuffle(size_t *a, size_t n)
{
	size_t i, j, t;

	for (i = 0; i < n; i++)
		a[i] = i;
	for (i = n; i > 1; i--) {
		j = rng() % i;
		t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Keeps the compiler from caching memory across iterations of a timed loop. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* ---- the baseline: a list kept sorted by (expiry, arm order) ---- */

struct ltimer {
	struct usl_list link;
	int64_t expiry;
	bool armed;
};

struct lset {
	struct usl_list head;
	size_t count;
};

/* Walks from the head to the first later timer; equal expiries stay FIFO. */
static void lset_arm(struct lset *s, struct ltimer *t, int64_t expiry)
{
	struct usl_list *pos;

	if (t->armed) {
		usl_list_del(&t->link);
		s->count--;
	}
	t->expiry = expiry;
	usl_list_foreach(pos, &s->head) {
		if (usl_list_entry(pos, struct ltimer, link)->expiry > expiry)
			break;
	}
	usl_list_add_tail(pos, &t->link);	/* i.e. insert before pos */
	t->armed = true;
	s->count++;
}

static void lset_cancel(struct lset *s, struct ltimer *t)
{
	if (!t->armed)
		return;
	usl_list_del(&t->link);
	t->armed = false;
	s->count--;
}

static int64_t lset_first(const struct lset *s)
{
	if (usl_list_empty(&s->head))
		return INT64_MAX;
	return usl_list_first_entry(&s->head, struct ltimer, link)->expiry;
}

static int cmp_ltimer(const void *a, const void *b)
{
	const struct ltimer *x = *(struct ltimer *const *)a, *y = *(struct ltimer *const *)b;

	return (x->expiry > y->expiry) - (x->expiry < y->expiry);
}

/* Builds a sorted list of t[0..n) in O(n log n), untimed setup for samples. */
static void lset_bulk(struct lset *s, struct ltimer *t, size_t n)
{
	struct ltimer **v = malloc(n * sizeof(*v));
	size_t i;

	if (v == NULL) {
		perror("malloc");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		t[i].expiry = rand_expiry();
		v[i] = &t[i];
	}
	qsort(v, n, sizeof(*v), cmp_ltimer);
	for (i = 0; i < n; i++) {
		usl_list_add_tail(&s->head, &v[i]->link);
		v[i]->armed = true;
	}
	s->count = n;
	free(v);
}

static void lset_init(struct lset *s, struct ltimer *t, size_t n)
{
	size_t i;

	usl_list_init(&s->head);
	s->count = 0;
	for (i = 0; i < n; i++) {
		usl_list_init(&t[i].link);
		t[i].armed = false;
	}
}

/* Samples that fit the visit budget when each op walks about `walk` nodes. */
static size_t sample_ops(size_t n, size_t walk)
{
	size_t k = (size_t)(LIST_VISIT_BUDGET / (walk ? walk : 1));

	if (k < 100)
		k = 100;
	return k < n ? k : n;
}

static void bench_list(struct result *r, size_t n)
{
	struct ltimer *t = calloc(n + n / 2 + 1, sizeof(*t));
	size_t *perm = malloc(n * sizeof(*perm));
	struct lset s;
	size_t i, k, base;
	int64_t t0, sum = 0;

	if (t == NULL || perm == NULL) {
		perror("malloc");
		exit(1);
	}
	lset_init(&s, t, n + n / 2 + 1);

	/* arm */
	if (n <= LIST_FULL_BUILD_MAX) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			lset_arm(&s, &t[i], rand_expiry());
		r->list_arm = (double)(now_ns() - t0) / (double)n;
	} else {
		base = n / 2;
		lset_bulk(&s, t, base);
		k = sample_ops(n, base / 2);
		t0 = now_ns();
		for (i = 0; i < k; i++)
			lset_arm(&s, &t[base + i], rand_expiry());
		r->list_arm = (double)(now_ns() - t0) / (double)k;
		/* Top up to n armed for the next measurements (untimed, sorted). */
		for (i = 0; i < base + k; i++)
			lset_cancel(&s, &t[i]);
		lset_bulk(&s, t, n);
	}

	/* first */
	k = RB_TARGET_OPS;
	t0 = now_ns();
	for (i = 0; i < k; i++) {
		BARRIER();
		sum += lset_first(&s);
	}
	r->list_first = (double)(now_ns() - t0) / (double)k;

	/* rearm */
	k = sample_ops(n, n / 2);
	t0 = now_ns();
	for (i = 0; i < k; i++)
		lset_arm(&s, &t[rng() % n], rand_expiry());
	r->list_rearm = (double)(now_ns() - t0) / (double)k;

	/* cancel */
	shuffle(perm, n);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		lset_cancel(&s, &t[perm[i]]);
	r->list_cancel = (double)(now_ns() - t0) / (double)n;

	if (s.count != 0 || sum == 42) {
		fprintf(stderr, "list bench: %zu timers left armed\n", s.count);
		exit(1);
	}
	free(t);
	free(perm);
}

/* ---- the usl timer set ---- */

static void noop(struct usl_timer *t)
{
}

static void bench_rb(struct result *r, size_t n)
{
	struct usl_timer *t = calloc(n, sizeof(*t));
	size_t *perm = malloc(n * sizeof(*perm));
	struct usl_fake_clock fc;
	struct usl_timerset ts;
	size_t rounds = RB_TARGET_OPS / n ? RB_TARGET_OPS / n : 1;
	size_t round, i;
	int64_t t0, t_arm = 0, t_first = 0, t_rearm = 0, t_cancel = 0, sum = 0;

	if (t == NULL || perm == NULL) {
		perror("malloc");
		exit(1);
	}
	usl_fake_clock_init(&fc, usl_time_ns(0));
	usl_timerset_init(&ts, &fc.clock);
	for (i = 0; i < n; i++)
		usl_timer_init(&t[i], noop);

	for (round = 0; round < rounds; round++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			usl_timer_arm_at(&ts, &t[i], usl_time_ns(rand_expiry()));
		t_arm += now_ns() - t0;

		t0 = now_ns();
		for (i = 0; i < n; i++)
			sum += usl_timerset_next(&ts).ns;
		t_first += now_ns() - t0;

		t0 = now_ns();
		for (i = 0; i < n; i++)
			usl_timer_arm_at(&ts, &t[rng() % n], usl_time_ns(rand_expiry()));
		t_rearm += now_ns() - t0;

		shuffle(perm, n);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			usl_timer_cancel(&t[perm[i]]);
		t_cancel += now_ns() - t0;
	}
	if (usl_timerset_count(&ts) != 0 || sum == 42) {
		fprintf(stderr, "rb bench: %zu timers left armed\n", usl_timerset_count(&ts));
		exit(1);
	}
	r->rb_arm = (double)t_arm / (double)(n * rounds);
	r->rb_first = (double)t_first / (double)(n * rounds);
	r->rb_rearm = (double)t_rearm / (double)(n * rounds);
	r->rb_cancel = (double)t_cancel / (double)(n * rounds);
	free(t);
	free(perm);
}

/* Each size is measured REPS times and the fastest kept: the box is shared. */
#define REPS	3

static void keep_min(double *best, double v)
{
	if (*best == 0 || v < *best)
		*best = v;
}

static void bench_size(struct result *best, size_t n)
{
	struct result r;
	int rep;

	memset(best, 0, sizeof(*best));
	best->n = n;
	for (rep = 0; rep < REPS; rep++) {
		bench_rb(&r, n);
		bench_list(&r, n);
		keep_min(&best->rb_arm, r.rb_arm);
		keep_min(&best->rb_cancel, r.rb_cancel);
		keep_min(&best->rb_first, r.rb_first);
		keep_min(&best->rb_rearm, r.rb_rearm);
		keep_min(&best->list_arm, r.list_arm);
		keep_min(&best->list_cancel, r.list_cancel);
		keep_min(&best->list_first, r.list_first);
		keep_min(&best->list_rearm, r.list_rearm);
	}
}

/* ---- output ---- */

static const char header[] =
	"n,rb_arm_ns,rb_cancel_ns,rb_first_ns,rb_rearm_ns,"
	"list_arm_ns,list_cancel_ns,list_first_ns,list_rearm_ns\n";

static void print_row(FILE *f, const struct result *r, bool csv)
{
	const char *fmt = csv ? "%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n"
			      : "%7zu %9.1f %9.1f %9.1f %9.1f %10.1f %9.1f %9.1f %10.1f\n";

	fprintf(f, fmt, r->n, r->rb_arm, r->rb_cancel, r->rb_first, r->rb_rearm,
		r->list_arm, r->list_cancel, r->list_first, r->list_rearm);
}

static int write_csv(const char *path, const struct result *res, size_t nres)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (f == NULL)
		return -1;
	fputs(header, f);
	for (i = 0; i < nres; i++)
		print_row(f, &res[i], true);
	return fclose(f);
}

/* Runs gnuplot on script with datafile/outfile set; 0 when a PNG was made. */
static int plot(const char *script, const char *csv, const char *png)
{
	char expr[2 * PATH_BUF + 64];
	pid_t pid;
	int status;

	/* The paths go inside gnuplot single quotes. */
	if (strchr(csv, '\'') || strchr(png, '\'')) {
		fprintf(stderr, "usl-bench: cannot plot: quote in output path\n");
		return -1;
	}
	snprintf(expr, sizeof(expr), "datafile='%s'; outfile='%s'", csv, png);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", "-e", expr, script, (char *)NULL);
		fprintf(stderr, "usl-bench: gnuplot: %s\n", strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: usl-bench [-q] [-o DIR] [-g GNUPLOT_SCRIPT]\n"
		"  -q  quick: n up to 10,000\n"
		"  -o  write DIR/usl-bench.csv and DIR/usl-bench.png\n"
		"  -g  gnuplot script (default %s)\n", USL_BENCH_GP);
	exit(2);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1000, 2000, 5000, 10000, 20000, 50000, 100000 };
	struct result res[sizeof(sizes) / sizeof(sizes[0])];
	const char *outdir = NULL, *script = USL_BENCH_GP;
	size_t i, nres = 0, max_n = 100000;
	char csv[PATH_BUF], png[PATH_BUF];
	int c;

	while ((c = getopt(argc, argv, "qo:g:h")) != -1) {
		switch (c) {
		case 'q':
			max_n = 10000;
			break;
		case 'o':
			outdir = optarg;
			break;
		case 'g':
			script = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	printf("# ns per operation, best of %d; list arm sampled above n=%d, list rearm "
	       "on at most %llu/(n/2) ops\n", REPS, LIST_FULL_BUILD_MAX, LIST_VISIT_BUDGET);
	printf("%7s %9s %9s %9s %9s %10s %9s %9s %10s\n", "n", "rb_arm", "rb_cancel",
	       "rb_first", "rb_rearm", "list_arm", "list_canc", "list_frst", "list_rearm");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max_n; i++) {
		bench_size(&res[nres], sizes[i]);
		print_row(stdout, &res[nres], false);
		fflush(stdout);
		nres++;
	}
	if (outdir == NULL)
		return 0;

	if (mkdir(outdir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "usl-bench: mkdir %s: %s\n", outdir, strerror(errno));
		return 1;
	}
	if (strlen(outdir) > PATH_BUF - 32) {
		fprintf(stderr, "usl-bench: output directory name too long\n");
		return 1;
	}
	snprintf(csv, sizeof(csv), "%s/usl-bench.csv", outdir);
	snprintf(png, sizeof(png), "%s/usl-bench.png", outdir);
	if (write_csv(csv, res, nres) < 0) {
		fprintf(stderr, "usl-bench: %s: %s\n", csv, strerror(errno));
		return 1;
	}
	printf("wrote %s\n", csv);
	if (plot(script, csv, png) < 0) {
		fprintf(stderr, "usl-bench: no plot made (is gnuplot installed? script %s)\n",
			script);
		return 1;
	}
	printf("wrote %s\n", png);
	return 0;
}
