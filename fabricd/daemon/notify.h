/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/notify.h - readiness and status for the service manager: the datagram
 * protocol of sd_notify(3) on $NOTIFY_SOCKET (a path, or "@name" for an
 * abstract socket), without libsystemd. Outside a Type=notify service the
 * variable is unset and every call is a no-op.
 */
#ifndef FABRICD_NOTIFY_H
#define FABRICD_NOTIFY_H

#include <sys/socket.h>
#include <sys/un.h>

struct notify {
	int fd; /* -1: not under a service manager */
	struct sockaddr_un addr;
	socklen_t addr_len;
};

/*
 * Reads $NOTIFY_SOCKET and unsets it, so that the processes fabricd starts
 * (wireguard-go) do not talk to the service manager in its name. 0 when
 * there is nothing to notify or the socket is ready; -errno (logged) when the
 * variable is set but unusable.
 */
int notify_open(struct notify *n);
/* Sends one datagram of "KEY=VALUE" lines (printf format); 0 or -errno. */
int notify_send(struct notify *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void notify_close(struct notify *n);

#endif
