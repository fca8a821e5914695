// SPDX-License-Identifier: GPL-2.0-or-later
/* netlink/nl.c - libmnl sockets, requests with ACKs, batches, dumps with DUMP_INTR retry. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netlink/nl.h"

int nl_open(struct nl_sock *s, int bus)
{
	int one = 1;
	int ret;

	memset(s, 0, sizeof(*s));
	s->bus = bus;
	s->mnl = mnl_socket_open2(bus, SOCK_CLOEXEC);
	if (!s->mnl)
		return -errno;
	if (mnl_socket_bind(s->mnl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		mnl_socket_close(s->mnl);
		s->mnl = NULL;
		return ret;
	}
	/* best effort: older kernels lack some of these, and nothing depends on them */
	mnl_socket_setsockopt(s->mnl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(s->mnl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bus == NETLINK_ROUTE)
		mnl_socket_setsockopt(s->mnl, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	s->portid = mnl_socket_get_portid(s->mnl);
	s->seq = 1;
	return 0;
}

void nl_close(struct nl_sock *s)
{
	if (s->mnl)
		mnl_socket_close(s->mnl);
	s->mnl = NULL;
}

static struct {
	bool open;
	struct nl_sock s;
	ino_t netns;
} route_shared;
static unsigned int route_shared_opened; /* for nl_route_shared_opened() */

unsigned int nl_route_shared_opened(void)
{
	return route_shared_opened;
}

static ino_t current_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
}

void nl_route_shared_close(void)
{
	if (route_shared.open)
		nl_close(&route_shared.s);
	memset(&route_shared, 0, sizeof(route_shared));
}

struct nl_sock *nl_route_shared(void)
{
	ino_t netns = current_netns();
	int ret;

	if (route_shared.open && route_shared.netns == netns && !route_shared.s.broken)
		return &route_shared.s;
	nl_route_shared_close();
	ret = nl_open(&route_shared.s, NETLINK_ROUTE);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	route_shared.open = true;
	route_shared.netns = netns;
	route_shared_opened++;
	return &route_shared.s;
}

struct nlmsghdr *nl_msg_start(struct nl_sock *s, void *buf, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh;

	/* libmnl 1.0.4 leaves attribute padding as it was: start from zeros */
	memset(buf, 0, NL_MSG_BUF);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = s->seq++;
	return nlh;
}

int nl_parse_error(const struct nlmsghdr *nlh, char *extack, size_t len)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	size_t offset;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err)))
		return -EBADMSG;
	if (extack)
		extack[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || !extack)
		return err->error;
	/* TLVs follow the echoed request, which is only a header when capped */
	offset = sizeof(*err);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		/* a bogus echoed length must not wrap the offset around */
		if (err->msg.nlmsg_len < sizeof(struct nlmsghdr) ||
		    err->msg.nlmsg_len > nlh->nlmsg_len)
			return err->error;
		offset += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	if (mnl_nlmsg_size(offset) > nlh->nlmsg_len)
		return err->error;
	mnl_attr_for_each_payload((const struct nlattr *)((const char *)err + offset),
				  nlh->nlmsg_len - mnl_nlmsg_size(offset))
	{
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0) {
			snprintf(extack, len, "%s", mnl_attr_get_str(attr));
			/* kernel strings sometimes end in a newline */
			extack[strcspn(extack, "\n")] = '\0';
		}
	}
	return err->error;
}

static int send_msg(struct nl_sock *s, const void *buf, size_t len)
{
	if (mnl_socket_sendto(s->mnl, buf, len) < 0) {
		s->broken = true;
		return -errno;
	}
	return 0;
}

/*
 * The one receive loop: reads replies into buf and passes each message to
 * fn(msg, ctx) until fn returns non-zero (> 0: done, < 0: that error).
 * A receive error is returned as -errno.
 */
static int recv_until(struct nl_sock *s, char *buf, size_t size,
		      int (*fn)(const struct nlmsghdr *r, void *ctx), void *ctx)
{
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s->mnl, buf, size);
		const struct nlmsghdr *r;
		int left;

		if (n < 0) {
			s->broken = true;
			return -errno;
		}
		left = (int)n;
		for (r = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(r, left);
		     r = mnl_nlmsg_next(r, &left)) {
			int ret = fn(r, ctx);

			if (ret)
				return ret;
		}
	}
}

struct request_ctx {
	struct nl_sock *s;
	uint32_t seq;
	mnl_cb_t cb;
	void *data;
	int cb_err, ret;
};

static int request_msg(const struct nlmsghdr *r, void *ctx)
{
	struct request_ctx *c = ctx;

	if (r->nlmsg_seq != c->seq)
		return 0; /* a stale reply of an earlier, failed request */
	if (r->nlmsg_type == NLMSG_ERROR) {
		int err = nl_parse_error(r, c->s->extack, sizeof(c->s->extack));

		c->ret = err ? err : c->cb_err;
		return 1;
	}
	if (r->nlmsg_type == NLMSG_DONE) {
		c->ret = c->cb_err;
		return 1;
	}
	if (c->cb && c->cb(r, c->data) == MNL_CB_ERROR && !c->cb_err)
		c->cb_err = errno ? -errno : -EINVAL;
	return 0;
}

int nl_request(struct nl_sock *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[NL_MSG_BUF];
	struct request_ctx c = {.s = s, .seq = nlh->nlmsg_seq, .cb = cb, .data = data};
	int ret;

	s->extack[0] = '\0';
	ret = send_msg(s, nlh, nlh->nlmsg_len);
	if (ret < 0)
		return ret;
	ret = recv_until(s, buf, sizeof(buf), request_msg, &c);
	return ret < 0 ? ret : c.ret;
}

struct dump_ctx {
	struct nl_sock *s;
	const struct nlmsghdr *req;
	mnl_cb_t cb;
	void *data;
	bool interrupted;
	int cb_err, ret;
};

static int dump_msg(const struct nlmsghdr *r, void *ctx)
{
	struct dump_ctx *c = ctx;

	if (r->nlmsg_seq != c->req->nlmsg_seq)
		return 0;
	if (r->nlmsg_flags & NLM_F_DUMP_INTR)
		c->interrupted = true;
	if (r->nlmsg_type == NLMSG_ERROR) {
		c->ret = nl_parse_error(r, c->s->extack, sizeof(c->s->extack));
		return 1;
	}
	if (r->nlmsg_type == NLMSG_DONE) {
		const int *err = mnl_nlmsg_get_payload(r);

		c->ret = r->nlmsg_len >= mnl_nlmsg_size(sizeof(int)) && *err < 0 ? *err : 0;
		return 1;
	}
	if (!c->interrupted && !c->cb_err && c->cb(r, c->data) == MNL_CB_ERROR)
		c->cb_err = errno ? -errno : -EINVAL;
	return 0;
}

int nl_dump(struct nl_sock *s, struct nlmsghdr *req, mnl_cb_t cb, void (*reset)(void *data),
	    void *data)
{
	char buf[NL_MSG_BUF * 4];
	struct dump_ctx c = {.s = s, .req = req, .cb = cb, .data = data};
	int ret = -EAGAIN;

	req->nlmsg_flags = (uint16_t)((req->nlmsg_flags & ~NLM_F_ACK) | NLM_F_DUMP);
	for (int attempt = 0; attempt < NL_DUMP_RETRIES; attempt++) {
		if (attempt) {
			if (reset)
				reset(data);
			req->nlmsg_seq = s->seq++;
		}
		s->extack[0] = '\0';
		ret = send_msg(s, req, req->nlmsg_len);
		if (ret < 0)
			break;
		c.interrupted = false;
		c.cb_err = 0;
		ret = recv_until(s, buf, sizeof(buf), dump_msg, &c);
		if (ret < 0 || c.ret < 0 || !c.interrupted)
			break;
		ret = -EAGAIN;
	}
	/* a WireGuard device's dump carries its private key: leave no copy on the stack */
	explicit_bzero(buf, sizeof(buf));
	if (ret < 0)
		return ret;
	return c.ret < 0 ? c.ret : c.cb_err;
}

/*
 * A batch buffer twice the flush threshold, so the message being built always
 * fits (messages are far smaller than NL_MSG_BUF).
 */
/*
 * Messages per sendmsg: the kernel queues every answer on the socket before
 * fabricd reads one, and 256 small messages (link deletes by index fill
 * 8 KiB) overflowed the default receive buffer (208 KiB) with ENOBUFS. A
 * batch's socket gets NL_BATCH_RCVBUF (root may exceed rmem_max), which
 * holds this many answers of a few hundred bytes each; without it (not
 * root), a batch is cut at NL_BATCH_MAX_MSGS_SMALL.
 */
#define NL_BATCH_MAX_MSGS	256
#define NL_BATCH_MAX_MSGS_SMALL 64
#define NL_BATCH_RCVBUF		(4 << 20)

struct nl_batch {
	struct nl_sock *s;
	char buf[NL_MSG_BUF * 2];
	size_t used;
	uint32_t first_seq;
	size_t n_msgs, cap;
	void **cookies; /* by seq - first_seq */
	nl_batch_error_cb on_error;
	void *data;
	int first_err;
	size_t max_msgs;  /* per sendmsg */
	size_t pace_msgs; /* 0: no pacing */
	unsigned int pace_us;
	bool paced_once;
	void (*throttle)(const void *data); /* before each send but the first */
	const void *throttle_data;
};

void *(*nl_batch_grow)(void *ptr, size_t size) = realloc;

struct nl_batch *nl_batch_new(struct nl_sock *s, nl_batch_error_cb on_error, void *data)
{
	struct nl_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->s = s;
	b->on_error = on_error;
	b->data = data;
	b->max_msgs = NL_BATCH_MAX_MSGS;
	if (setsockopt(mnl_socket_get_fd(s->mnl), SOL_SOCKET, SO_RCVBUFFORCE,
		       &(int){NL_BATCH_RCVBUF}, sizeof(int)) < 0)
		b->max_msgs = NL_BATCH_MAX_MSGS_SMALL;
	return b;
}

static void batch_report(struct nl_batch *b, uint32_t seq, int err, const char *extack)
{
	void *cookie = NULL;

	if (seq >= b->first_seq && seq - b->first_seq < b->n_msgs)
		cookie = b->cookies[seq - b->first_seq];
	if (!b->first_err)
		b->first_err = err;
	if (!b->first_err)
		return;
	snprintf(b->s->extack, sizeof(b->s->extack), "%s", extack);
	if (b->on_error)
		b->on_error(cookie, err, extack, b->data);
}

struct ack_ctx {
	struct nl_batch *b;
	size_t acked;
};

static int batch_ack(const struct nlmsghdr *r, void *ctx)
{
	struct ack_ctx *c = ctx;
	struct nl_batch *b = c->b;
	char extack[NL_EXTACK_MAX];
	int err;

	if (r->nlmsg_type != NLMSG_ERROR || r->nlmsg_seq < b->first_seq ||
	    r->nlmsg_seq - b->first_seq >= b->n_msgs)
		return 0;
	err = nl_parse_error(r, extack, sizeof(extack));
	c->acked++;
	if (err)
		batch_report(b, r->nlmsg_seq, err, extack);
	return c->acked >= b->n_msgs;
}

/* Drops whatever is queued on s (without waiting). */
static void drain(struct nl_sock *s, char *buf, size_t size)
{
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(s->mnl), buf, size, MSG_DONTWAIT);

		if (n <= 0 && !(n < 0 && errno == ENOBUFS))
			return;
	}
}

int nl_batch_flush(struct nl_batch *b)
{
	char buf[NL_MSG_BUF];
	struct ack_ctx c = {0};
	int ret;

	if (!b->n_msgs)
		goto out;
	if (b->pace_msgs && b->paced_once)
		usleep(b->pace_us);
	if (b->throttle && b->paced_once)
		b->throttle(b->throttle_data);
	b->paced_once = true;
	ret = send_msg(b->s, b->buf, b->used);
	if (ret < 0) {
		batch_report(b, b->first_seq, ret, "");
		goto out;
	}
	/* every message asked for an ACK: wait until each has one */
	c.b = b;
	ret = recv_until(b->s, buf, sizeof(buf), batch_ack, &c);
	if (ret < 0)
		batch_report(b, b->first_seq + (uint32_t)c.acked, ret, "");
	/*
	 * After an overrun some ACKs are lost and the rest still queued (the
	 * kernel handled the whole batch inside sendmsg): drop those, or the
	 * next batch's ACKs would overflow behind them and be waited for forever.
	 */
	if (ret == -ENOBUFS)
		drain(b->s, buf, sizeof(buf));
out:
	b->used = 0;
	b->n_msgs = 0;
	return b->first_err;
}

struct nlmsghdr *nl_batch_msg(struct nl_batch *b, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh;

	/* flush while a whole message is sure to fit in the rest of the buffer */
	if (b->used > NL_MSG_BUF || b->n_msgs >= b->max_msgs ||
	    (b->pace_msgs && b->n_msgs >= b->pace_msgs))
		nl_batch_flush(b);
	if (!b->n_msgs)
		b->first_seq = b->s->seq;
	nlh = nl_msg_start(b->s, b->buf + b->used, type, flags);
	return nlh;
}

void nl_batch_set_pacing(struct nl_batch *b, size_t max_msgs, unsigned int pause_us)
{
	b->pace_msgs = max_msgs;
	b->pace_us = pause_us;
}

void nl_batch_set_throttle(struct nl_batch *b, void (*wait)(const void *data), const void *data)
{
	b->throttle = wait;
	b->throttle_data = data;
}

void nl_batch_reserve(struct nl_batch *b, size_t n_msgs, size_t bytes)
{
	if (b->used + bytes > NL_MSG_BUF || b->n_msgs + n_msgs > b->max_msgs ||
	    (b->pace_msgs && b->n_msgs + n_msgs > b->pace_msgs))
		nl_batch_flush(b);
}

void nl_batch_commit(struct nl_batch *b, struct nlmsghdr *nlh, void *cookie)
{
	if (b->n_msgs == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		void **grown = nl_batch_grow(b->cookies, cap * sizeof(*grown));

		if (!grown) {
			/* the message is dropped: its op must fail, not look applied */
			b->first_err = b->first_err ? b->first_err : -ENOMEM;
			if (b->on_error)
				b->on_error(cookie, -ENOMEM, "fabricd ran out of memory", b->data);
			return;
		}
		b->cookies = grown;
		b->cap = cap;
	}
	b->cookies[b->n_msgs++] = cookie;
	b->used += NLMSG_ALIGN(nlh->nlmsg_len);
}

int nl_batch_finish(struct nl_batch *b)
{
	int ret;

	if (!b)
		return -ENOMEM;
	ret = nl_batch_flush(b);
	free(b->cookies);
	free(b);
	return ret;
}

static int family_id_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
	{
		if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
			*(uint16_t *)data = mnl_attr_get_u16(attr);
	}
	return MNL_CB_OK;
}

int nl_genl_family(struct nl_sock *s, const char *name, uint16_t *id)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, GENL_ID_CTRL, 0);
	struct genlmsghdr *genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	int ret;

	genl->cmd = CTRL_CMD_GETFAMILY;
	genl->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	*id = 0;
	ret = nl_request(s, nlh, family_id_cb, id);
	if (ret == -ENOENT)
		return -EPROTONOSUPPORT;
	if (ret == 0 && !*id)
		return -EPROTONOSUPPORT;
	return ret;
}

const char *nl_strerror(const struct nl_sock *s, int err, char *buf, size_t len)
{
	if (s && s->extack[0])
		snprintf(buf, len, "%s (kernel: %s)", strerror(-err), s->extack);
	else
		snprintf(buf, len, "%s", strerror(-err));
	return buf;
}
