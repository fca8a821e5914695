/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * definition/wgkey.h - WireGuard (Curve25519) keys: generation, public key derivation,
 * base64 (the form `wg` and config files use), hex (the form the UAPI text
 * protocol uses) and loading a private key file that only its owner can read.
 *
 * Every function wipes the temporary copies it makes; callers wipe their own
 * key buffers (explicit_bzero) when done.
 */
#ifndef FABRICD_WGKEY_H
#define FABRICD_WGKEY_H

#include <stddef.h>
#include <stdint.h>

#define WGKEY_LEN     32
#define WGKEY_B64_LEN 45 /* 44 characters and the NUL */
#define WGKEY_HEX_LEN 65 /* 64 characters and the NUL */

/* 32 random bytes (getrandom), clamped for Curve25519. 0 or -errno. */
int wgkey_generate(uint8_t key[WGKEY_LEN]);

/* The public key of priv (priv is clamped internally, as `wg pubkey` does). */
void wgkey_public(uint8_t pub[WGKEY_LEN], const uint8_t priv[WGKEY_LEN]);

/*
 * Exactly 44 characters of standard base64 (with its one '=') that encode
 * 32 bytes; whitespace around it (a trailing newline) is allowed. 0 or
 * -EINVAL; key is zeroed on failure.
 */
int wgkey_from_base64(const char *text, uint8_t key[WGKEY_LEN]);
void wgkey_to_base64(char out[WGKEY_B64_LEN], const uint8_t key[WGKEY_LEN]);

/* Exactly 64 hex digits (either case). 0 or -EINVAL; key is zeroed on failure. */
int wgkey_from_hex(const char *text, uint8_t key[WGKEY_LEN]);
/* Lower-case hex, as the UAPI prints it. */
void wgkey_to_hex(char out[WGKEY_HEX_LEN], const uint8_t key[WGKEY_LEN]);

/* Whether all 32 bytes are zero (constant time). */
int wgkey_is_zero(const uint8_t key[WGKEY_LEN]);

/*
 * Reads one base64 private key from path. Refuses a file that is not a
 * regular file, that another user owns, that group or others may access (mode & 077), that cannot
 * be read, or that does not hold exactly one key; err then says which file, what is wrong and what
 * to do, and never contains key material. 0 or -errno (-EPERM for the mode, -EINVAL for the
 * content).
 */
int wgkey_load_file(const char *path, uint8_t key[WGKEY_LEN], char *err, size_t errlen);

/* What a key file holds, for the messages: what it is called and how one is made. */
enum wgkey_file { WGKEY_FILE_PRIVATE, WGKEY_FILE_PRESHARED };
/*
 * The directories of a key file to be written at path (there or not yet) as
 * wgkey_load_file checks them: each from path's own up to /, owned by root
 * or this user and not writable by group or others without the sticky bit.
 * A key written where every later load refuses it is no key: check first.
 * 0 or -EPERM with err filled.
 */
int wgkey_check_dirs(const char *path, enum wgkey_file kind, char *err, size_t errlen);
/* wgkey_load_file for either kind (the same checks: a preshared key is as secret). */
int wgkey_load_file_of(const char *path, enum wgkey_file kind, uint8_t key[WGKEY_LEN], char *err,
		       size_t errlen);

#endif
