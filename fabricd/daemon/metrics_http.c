// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/metrics_http.c - GET /metrics with libmicrohttpd.
 *
 * Why a thread of its own (MHD_USE_INTERNAL_POLLING_THREAD) rather than
 * MHD's descriptors in the daemon's epoll loop: a scrape must never delay a
 * repair, and a pass may take a while (netlink, nftables, wireguard-go). In
 * the loop, a pass would also stall every scrape. With the thread, the loop
 * renders the text itself (it owns every kernel handle) and hands it over
 * under a mutex; the thread only sends those bytes in a response, so a
 * slow or stuck client costs one connection slot and never the loop. The
 * critical section is a few pointers on either side: the responses send
 * the published buffer itself (struct snapshot).
 *
 * The text is rendered when asked for (at 64 nodes x 1024 vnets it is
 * 2.35 MB, and rendering it every second cost an idle daemon 0.85 % of a
 * core whether anyone scraped or not): a scrape finding the last text older
 * than FRESH_MS asks the loop for a new one (an eventfd the loop polls) and
 * waits for it, at most WAIT_MS; a scrape within FRESH_MS of a render gets
 * that text, so scrapes arriving together share one render. A text is never
 * changed once published, so no scrape sees half of one. When the loop is
 * busy in a pass past WAIT_MS, the scrape gets the last text there is.
 *
 * Why dlopen: libmicrohttpd brings GnuTLS and seven more libraries whose
 * loading alone costs 2.7 MiB of resident memory (a program linked with them
 * idles at 4.8 MiB, without them at 2.1), in every daemon, with or without
 * --metrics. Loaded on the first --metrics only, it costs only those who scrape.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "daemon/metrics_conns.h"
#include "daemon/metrics_http.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* one address cannot take them all: slow clients of one host leave room for a scraper */
#define PER_IP_LIMIT	   4
#define CONNECTION_TIMEOUT 10	/* seconds: a client that stalls loses its slot */
#define FRESH_MS	   1000 /* a text at most this old is served as it is */
#define WAIT_MS		   2000 /* for the loop's render; then the last text */

/* Debian's SONAME (bookworm: libmicrohttpd12, trixie: libmicrohttpd12t64) */
#define MHD_LIBRARY "libmicrohttpd.so.12"

/* The nine calls this file makes, from the library loaded at run time
 * (typeof of a declaration references no symbol, so nothing is linked). */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback_cls) *create_response_shared;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_connection_info) *get_connection_info;
} mhd;

/* Fills *slot (a function pointer of mhd) with symbol name. False when it is missing. */
static bool load_symbol(void *handle, const char *name, void *slot)
{
	void *fn = dlsym(handle, name);

	if (fn)
		memcpy(slot, &fn, sizeof(fn)); /* ISO C has no void * to function pointer cast */
	return fn != NULL;
}

/* Loads libmicrohttpd once per process. 0, or -ENOENT (logged: what to install). */
static int mhd_load(void)
{
	static void *handle;
	void *h;

	if (handle)
		return 0;
	h = dlopen(MHD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (h && load_symbol(h, "MHD_start_daemon", &mhd.start_daemon) &&
	    load_symbol(h, "MHD_get_daemon_info", &mhd.get_daemon_info) &&
	    load_symbol(h, "MHD_stop_daemon", &mhd.stop_daemon) &&
	    load_symbol(h, "MHD_create_response_from_buffer", &mhd.create_response_from_buffer) &&
	    load_symbol(h, "MHD_create_response_from_buffer_with_free_callback_cls",
			&mhd.create_response_shared) &&
	    load_symbol(h, "MHD_add_response_header", &mhd.add_response_header) &&
	    load_symbol(h, "MHD_queue_response", &mhd.queue_response) &&
	    load_symbol(h, "MHD_destroy_response", &mhd.destroy_response) &&
	    load_symbol(h, "MHD_get_connection_info", &mhd.get_connection_info)) {
		handle = h;
		return 0;
	}
	log_error("metrics: --metrics needs libmicrohttpd (%s): %s; install it (apt-get install "
		  "libmicrohttpd12) or use --metrics-file",
		  MHD_LIBRARY, dlerror());
	if (h)
		dlclose(h);
	return -ENOENT;
}

/*
 * A published text. Responses send it from its own buffer (a copy a scrape
 * was 2.35 MB at 64 nodes and 1024 vnets, left resident in the thread's
 * malloc arena): each holds a reference until libmicrohttpd is done with it.
 * One replaced while a response still sends it goes with the last reference;
 * otherwise its buffer goes back to the loop to render into.
 */
struct snapshot {
	struct metrics_http *h;
	struct metrics_text t;
	unsigned int refs; /* under h->lock, as retired */
	bool retired;
	long long rendered_ms; /* CLOCK_MONOTONIC */
};

struct metrics_http {
	struct MHD_Daemon *mhd;
	struct conn_slots conns; /* only libmicrohttpd's thread reads or writes them */
	pthread_mutex_t lock;
	pthread_cond_t published;  /* signalled with each new cur */
	struct snapshot *cur;	   /* the last published text, under lock */
	unsigned long published_n; /* texts published, under lock */
	bool wanted;		   /* a scrape waits for a render, under lock */
	bool outdated;		   /* a pass ended since cur was rendered, under lock */
	bool stopping;		   /* the daemon exits: no scrape waits, under lock */
	long long wanted_at;	   /* when wanted was set (CLOCK_MONOTONIC ms), under lock */
	int wake;		   /* eventfd: tells the loop that wanted was set */
	unsigned int port;
};

int metrics_parse_listen(const char *text, struct sockaddr_storage *ss, char *err, size_t len)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(text, ':'), *port_text = colon ? colon + 1 : text;
	size_t hlen = colon ? (size_t)(colon - text) : 0;
	char *end;
	unsigned long port = strtoul(port_text, &end, 10);

	memset(ss, 0, sizeof(*ss));
	/* digits only ("+80", " 80" are not ports), and an IPv6 address only in brackets */
	if (*port_text < '0' || *port_text > '9' || *end || port > 65535 ||
	    (hlen && text[0] != '[' && memchr(text, ':', hlen))) {
		snprintf(err, len, "--metrics \"%s\": give ADDR:PORT, [V6ADDR]:PORT or PORT", text);
		return -EINVAL;
	}
	if (hlen && text[0] == '[' && text[hlen - 1] == ']') {
		text++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host)) {
		snprintf(err, len, "--metrics \"%s\": the address is too long", text);
		return -EINVAL;
	}
	if (hlen) {
		memcpy(host, text, hlen);
		host[hlen] = '\0';
	}
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
	} else {
		snprintf(err, len, "--metrics: \"%s\" is not an IPv4 or IPv6 address", host);
		return -EINVAL;
	}
	return 0;
}

/* Queues r (the reference given up) with the headers every answer has. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned int code, struct MHD_Response *r)
{
	enum MHD_Result ret;

	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED) /* RFC 9110: a 405 says what is allowed */
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	else if (code == MHD_HTTP_SERVICE_UNAVAILABLE)
		mhd.add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned int code, const char *text,
				 size_t len)
{
	struct MHD_Response *r =
	    mhd.create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);

	return r ? queue(c, code, r) : MHD_NO;
}

static void snapshot_release(void *cls)
{
	struct snapshot *s = cls;
	bool gone;

	pthread_mutex_lock(&s->h->lock);
	gone = !--s->refs && s->retired;
	pthread_mutex_unlock(&s->h->lock);
	if (gone) {
		metrics_text_free(&s->t);
		free(s);
	}
}

/* The last published text, from its buffer; NULL s: none yet. */
static enum MHD_Result send_snapshot(struct MHD_Connection *c, struct snapshot *s)
{
	static const char not_yet[] = "fabricd: no metrics before the first convergence\n";
	struct MHD_Response *r;

	/* an empty 200 would read as a healthy target without series */
	if (!s)
		return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, not_yet, sizeof(not_yet) - 1);
	r = mhd.create_response_shared(s->t.len, s->t.text, snapshot_release, s);
	if (!r) {
		snapshot_release(s);
		return MHD_NO;
	}
	return queue(c, MHD_HTTP_OK, r);
}

/*
 * Under h->lock: the text to send. One older than FRESH_MS is rendered again
 * by the loop first (at most WAIT_MS waited for); none before the first
 * convergence (the loop publishes the first at once then).
 */
static struct snapshot *fresh_snapshot(struct metrics_http *h)
{
	struct snapshot *before = h->cur;
	unsigned long n = h->published_n;
	long long now = monotonic_ms(), deadline;
	struct timespec until;
	uint64_t one = 1;

	/* a pass since the render: its counts are in no text yet, whatever the age */
	if (!before || (!h->outdated && now - before->rendered_ms < FRESH_MS))
		return before;
	if (!h->wanted) {
		h->wanted = true;
		h->wanted_at = now;
		/* a full counter (2^64 - 2 unread wakes) cannot be: the loop reads it */
		if (write(h->wake, &one, sizeof(one)) < 0)
			log_debug("metrics: cannot wake the loop: %s", strerror(errno));
	}
	/*
	 * Scrapes that come while one waits share its deadline: this thread answers
	 * one request at a time, so a wait each made the third of three scrapes on a
	 * busy loop wait 3 x WAIT_MS.
	 */
	deadline = h->wanted_at + WAIT_MS;
	until = (struct timespec){deadline / 1000, (deadline % 1000) * 1000000L};
	while (h->published_n == n && !h->stopping &&
	       pthread_cond_timedwait(&h->published, &h->lock, &until) != ETIMEDOUT)
		;
	return h->cur;
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct metrics_http *h = cls;
	const union MHD_ConnectionInfo *info;

	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		conns_remove(&h->conns, c);
		return;
	}
	info = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (info)
		conns_add(&h->conns, c, info->connect_fd, monotonic_ms());
}

static void request_done(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode code)
{
	struct metrics_http *h = cls;

	(void)state, (void)code;
	conns_answered(&h->conns, c, monotonic_ms());
}

/*
 * Before a new connection is added: with every slot taken, the one
 * conns_victim chooses is shut down (libmicrohttpd closes it when it reads
 * the end) and the newcomer has its slot, or the newcomer is refused.
 */
static enum MHD_Result conn_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct metrics_http *h = cls;
	bool refuse;
	struct conn_slot *victim = conns_victim(&h->conns, monotonic_ms(), &refuse);

	(void)addr, (void)len;
	if (victim) {
		shutdown(victim->fd, SHUT_RDWR);
		victim->evicted = true;
	}
	return refuse ? MHD_NO : MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	static const char not_found[] = "fabricd: the metrics are at /metrics\n";
	static const char not_allowed[] = "fabricd: only GET and HEAD\n";
	struct metrics_http *h = cls;
	struct snapshot *s;

	(void)version, (void)upload, (void)upload_size, (void)state;
	conns_request(&h->conns, c, monotonic_ms()); /* not a slot to take, for a while */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed,
				 sizeof(not_allowed) - 1);
	if (strcmp(url, "/metrics"))
		return send_text(c, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1);
	pthread_mutex_lock(&h->lock);
	s = fresh_snapshot(h);
	if (s)
		s->refs++;
	pthread_mutex_unlock(&h->lock);
	return send_snapshot(c, s);
}

/*
 * libmicrohttpd's own messages (a malformed request, the connection limit
 * reached) are the clients' doing: shown with --verbose only, so that no
 * client can fill the journal.
 */
static void mhd_message(void *cls, const char *fmt, va_list ap)
{
	char text[256];

	(void)cls;
	if (!log_is_verbose())
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	text[strcspn(text, "\n")] = '\0';
	log_debug("metrics: %s", text);
}

/* The lock, the condition (on CLOCK_MONOTONIC, as the deadlines) and the eventfd. */
static int sync_init(struct metrics_http *h)
{
	pthread_condattr_t attr;

	h->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->wake < 0)
		return -1;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&h->published, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&h->lock, NULL);
	return 0;
}

static void sync_destroy(struct metrics_http *h)
{
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->published);
	close(h->wake);
}

int metrics_http_start(const struct sockaddr_storage *ss, struct metrics_http **out)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	struct metrics_http *h = calloc(1, sizeof(*h));
	char addr[INET6_ADDRSTRLEN] = "?";
	uint16_t port;

	if (!h)
		return -ENOMEM;
	if (mhd_load() < 0) {
		free(h);
		return -ENOENT;
	}
	if (ss->ss_family == AF_INET6) {
		/* "[::]" takes IPv4 scrapes too, as on any Linux socket (IPV6_V6ONLY off) */
		flags |= MHD_USE_DUAL_STACK;
		port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, addr,
			  sizeof(addr));
	} else {
		port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, addr, sizeof(addr));
	}
	if (sync_init(h) < 0) {
		free(h);
		return -ENOMEM;
	}
	h->mhd = mhd.start_daemon(flags, port, conn_accept, h, handle, h, MHD_OPTION_SOCK_ADDR, ss,
				  /* above CONNS_LIMIT: libmicrohttpd refuses before asking */
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONNS_MAX,
				  MHD_OPTION_NOTIFY_CONNECTION, conn_notify, h,
				  MHD_OPTION_NOTIFY_COMPLETED, request_done, h,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_IP_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT,
				  /* RFC 9112 3.2: an HTTP/1.1 request without Host gets 400 */
				  MHD_OPTION_STRICT_FOR_CLIENT, (int)1, MHD_OPTION_EXTERNAL_LOGGER,
				  mhd_message, NULL, MHD_OPTION_END);
	if (!h->mhd) {
		int err = errno ? errno : EADDRINUSE;

		log_error("metrics: cannot listen on %s port %u: %s; choose another --metrics "
			  "ADDR:PORT",
			  addr, port, strerror(err));
		sync_destroy(h);
		free(h);
		return -err;
	}
	info = mhd.get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : port;
	log_info("metrics: serving http://%s%s%s:%u/metrics", ss->ss_family == AF_INET6 ? "[" : "",
		 addr, ss->ss_family == AF_INET6 ? "]" : "", h->port);
	*out = h;
	return 0;
}

void metrics_http_publish(struct metrics_http *h, struct metrics_text *t)
{
	struct snapshot *s = calloc(1, sizeof(*s)), *old;

	if (!s)
		return; /* the previous text stays */
	s->h = h;
	s->t = *t;
	s->rendered_ms = monotonic_ms();
	*t = (struct metrics_text){0};
	pthread_mutex_lock(&h->lock);
	old = h->cur;
	h->cur = s;
	h->published_n++;
	h->wanted = false;
	h->outdated = false;
	pthread_cond_broadcast(&h->published);
	if (old && old->refs) {
		old->retired = true; /* a response still sends it: the last one frees it */
		old = NULL;
	}
	pthread_mutex_unlock(&h->lock);
	if (old) {
		*t = old->t;
		free(old);
	}
}

void metrics_http_outdated(struct metrics_http *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->outdated = true;
	pthread_mutex_unlock(&h->lock);
}

int metrics_http_fd(const struct metrics_http *h)
{
	return h->wake;
}

bool metrics_http_wanted(struct metrics_http *h)
{
	uint64_t n;
	bool wanted;

	if (read(h->wake, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("metrics: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&h->lock);
	wanted = h->wanted;
	pthread_mutex_unlock(&h->lock);
	return wanted;
}

unsigned int metrics_http_port(const struct metrics_http *h)
{
	return h->port;
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	/* a scrape waiting for a render no loop will make would hold up the exit */
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_broadcast(&h->published);
	pthread_mutex_unlock(&h->lock);
	mhd.stop_daemon(h->mhd);
	sync_destroy(h);
	if (h->cur)
		metrics_text_free(&h->cur->t);
	free(h->cur);
	free(h);
}
