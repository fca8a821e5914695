/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netlink/nl.h - the one libmnl wrapper: sockets with extended ACK and strict
 * checking, a sequence number per socket, requests that always ask for an
 * ACK, batches whose ACKs are matched to their messages by sequence number,
 * and dumps restarted when the kernel says they were interrupted.
 */
#ifndef FABRICD_NL_H
#define FABRICD_NL_H

#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NL_EXTACK_MAX 256
/* Requests are built in buffers of this size (one page is what the kernel reads at once). */
#define NL_MSG_BUF 8192

struct nl_sock {
	struct mnl_socket *mnl;
	int bus; /* NETLINK_ROUTE or NETLINK_GENERIC */
	uint32_t portid;
	uint32_t seq;
	char extack[NL_EXTACK_MAX]; /* the kernel's text for the last error, or "" */
	/*
	 * A send or receive failed (ENOBUFS, EBADF, ...), not the kernel's answer:
	 * replies may be lost or still queued. A kept socket is opened anew.
	 */
	bool broken;
};

/* Opens and binds a socket on bus; 0 or -errno. */
int nl_open(struct nl_sock *s, int bus);
void nl_close(struct nl_sock *s);

/*
 * The process's rtnetlink socket, opened on first use and kept (the daemon's
 * passes share it; a one-shot command has one pass). A socket stays in the
 * namespace it was opened in, so a process that moved gets a new one; so does
 * one whose last send or receive failed (broken). The struct stays at the same
 * address when it is opened anew, so callers may keep the pointer. NULL with
 * errno set when it cannot be opened.
 */
struct nl_sock *nl_route_shared(void);
/* Closes it (at exit, or after an error that may have left replies unread). */
void nl_route_shared_close(void);
/* How often this process opened it (for tests and --verbose). */
unsigned int nl_route_shared_opened(void);

/*
 * Starts a message in buf (at least NL_MSG_BUF bytes, zeroed here): type, flags (NLM_F_REQUEST and
 * NLM_F_ACK are added), the next sequence number of s.
 */
struct nlmsghdr *nl_msg_start(struct nl_sock *s, void *buf, uint16_t type, uint16_t flags);

/*
 * Sends one request and waits for its ACK; replies other than the ACK are
 * passed to cb (may be NULL). 0 or -errno; on error s->extack has the
 * kernel's explanation if it gave one.
 */
int nl_request(struct nl_sock *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

/* Tries of a dump the kernel interrupts (NLM_F_DUMP_INTR) before nl_dump gives -EAGAIN. */
#define NL_DUMP_RETRIES 5

/*
 * Runs a dump: sends req (NLM_F_DUMP is added), passes each message to cb.
 * When the kernel flags the dump as interrupted (NLM_F_DUMP_INTR), calls
 * reset(data) and starts again, at most a few times, so a caller never diffs
 * a partial view. 0 or -errno (-EAGAIN when it stayed inconsistent).
 */
int nl_dump(struct nl_sock *s, struct nlmsghdr *req, mnl_cb_t cb, void (*reset)(void *data),
	    void *data);

/*
 * A batch: many requests in one send, ACKs matched by sequence number. The
 * caller starts each message with nl_batch_msg() and finishes it with
 * nl_batch_commit(); the batch flushes itself when the next message might
 * not fit. on_error(cookie, err, extack, data) is called for each failed
 * message; nl_batch_flush() returns the first error (or 0).
 */
typedef void (*nl_batch_error_cb)(void *cookie, int err, const char *extack, void *data);

struct nl_batch;
struct nl_batch *nl_batch_new(struct nl_sock *s, nl_batch_error_cb on_error, void *data);
/*
 * Room for one more message; may flush first. Never NULL: a flush always
 * empties the buffer, and a failed one reaches on_error and nl_batch_finish.
 */
struct nlmsghdr *nl_batch_msg(struct nl_batch *b, uint16_t type, uint16_t flags);
void nl_batch_commit(struct nl_batch *b, struct nlmsghdr *nlh, void *cookie);
/*
 * Flushes now unless n_msgs more messages of at most bytes in all fit in this
 * send, so that messages which must reach the kernel together (a link and its
 * owner mark) share one sendmsg.
 */
void nl_batch_reserve(struct nl_batch *b, size_t n_msgs, size_t bytes);
int nl_batch_flush(struct nl_batch *b);
/*
 * Paces the batch: at most max_msgs messages per send, then a pause of
 * pause_us. Listeners that treat a netlink overflow as fatal (wireguard-go's
 * TUN watcher closes the device on ENOBUFS) get time to drain their socket.
 */
void nl_batch_set_pacing(struct nl_batch *b, size_t max_msgs, unsigned int pause_us);
/* Calls wait(data) before each send but the first, e.g. until a listener has drained. */
void nl_batch_set_throttle(struct nl_batch *b, void (*wait)(const void *data), const void *data);
/* Flushes and frees; returns the first error of the whole batch. */
int nl_batch_finish(struct nl_batch *b);
/* How a batch grows its bookkeeping: realloc; unit tests inject a failure here. */
extern void *(*nl_batch_grow)(void *ptr, size_t size);

/*
 * The error of an NLMSG_ERROR (0 for an ACK), its extack text copied into
 * extack; -EBADMSG when the message is too short to be one.
 */
int nl_parse_error(const struct nlmsghdr *nlh, char *extack, size_t len);

/* Generic netlink family id by name; -EPROTONOSUPPORT when the family is absent. */
int nl_genl_family(struct nl_sock *s, const char *name, uint16_t *id);

/* "create failed: File exists (kernel: ...)" tail for messages: strerror plus extack. */
const char *nl_strerror(const struct nl_sock *s, int err, char *buf, size_t len);

#endif
