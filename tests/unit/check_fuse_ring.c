/*
 * FUSE over io_uring's messages as the workers serve the ring
 * (src/fuse/ring_msg.c): a request the kernel put in an entry laid out as
 * /dev/fuse has it, with the kernel's sizes checked before libfuse sees
 * it; a reply put into its entry; INIT's reply asking for the ring; and
 * the bound on the spare entries held requests may take.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "test_util.h"

#include "../../src/fuse/ring_msg.h"
#include "../../src/export/parking.h"

#define PAYLOAD 8192

struct entry {
	struct fuse_uring_req_header hdr;
	char *slot;	/* RING_HEAD, then the payload */
	char *payload;
};

static void entry_init(struct entry *e)
{
	memset(&e->hdr, 0, sizeof(e->hdr));
	e->slot = calloc(1, RING_HEAD + PAYLOAD);
	ck_assert_ptr_nonnull(e->slot);
	e->payload = e->slot + RING_HEAD;
}

/* A write of @data_len bytes as the kernel puts it in an entry: in_header,
 * fuse_write_in in op_in, the data in the payload. */
static void put_write(struct entry *e, uint64_t unique, size_t data_len)
{
	struct fuse_in_header in = { .len = (uint32_t)(sizeof(in) + sizeof(struct fuse_write_in) +
						       data_len),
				     .opcode = FUSE_WRITE, .unique = unique, .nodeid = 16 };
	struct fuse_write_in w = { .fh = 7, .offset = 4096, .size = (uint32_t)data_len };

	memcpy(e->hdr.in_out, &in, sizeof(in));
	memcpy(e->hdr.op_in, &w, sizeof(w));
	memset(e->payload, 0xab, data_len);
	e->hdr.ring_ent_in_out.payload_sz = (uint32_t)data_len;
	e->hdr.ring_ent_in_out.commit_id = unique;
}

START_TEST(test_request_laid_out)
{
	struct entry e;
	struct fuse_in_header in;
	struct fuse_write_in w;
	char *mem;
	size_t len;

	entry_init(&e);
	put_write(&e, 42, 4096);
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), 0);
	/* The data stays where the kernel put it, the headers just before. */
	ck_assert_ptr_eq(mem, e.payload - sizeof(in) - sizeof(w));
	ck_assert_uint_eq(len, sizeof(in) + sizeof(w) + 4096);
	memcpy(&in, mem, sizeof(in));
	memcpy(&w, mem + sizeof(in), sizeof(w));
	ck_assert_uint_eq(in.opcode, FUSE_WRITE);
	ck_assert_uint_eq(in.unique, 42);
	ck_assert_uint_eq(in.len, len);
	ck_assert_uint_eq(w.offset, 4096);
	ck_assert_uint_eq(w.size, 4096);
	ck_assert_uint_eq((unsigned char)mem[sizeof(in) + sizeof(w)], 0xab);
	free(e.slot);
}
END_TEST

/* A lookup: nothing in op_in, the name in the payload. */
START_TEST(test_request_without_op_header)
{
	struct entry e;
	struct fuse_in_header in = { .len = sizeof(in) + 3, .opcode = FUSE_LOOKUP, .unique = 9,
				     .nodeid = 1 };
	char *mem;
	size_t len;

	entry_init(&e);
	memcpy(e.hdr.in_out, &in, sizeof(in));
	memcpy(e.payload, "n1", 3);
	e.hdr.ring_ent_in_out.payload_sz = 3;
	e.hdr.ring_ent_in_out.commit_id = 9;
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), 0);
	ck_assert_ptr_eq(mem, e.payload - sizeof(in));
	ck_assert_uint_eq(len, sizeof(in) + 3);
	ck_assert_str_eq(mem + sizeof(in), "n1");
	free(e.slot);
}
END_TEST

/* Sizes from the kernel that do not add up never reach libfuse. */
START_TEST(test_request_sizes_checked)
{
	struct entry e;
	struct fuse_in_header in;
	char *mem = NULL;
	size_t len = 0;

	entry_init(&e);
	/* More payload than the entry has. */
	put_write(&e, 1, 4096);
	e.hdr.ring_ent_in_out.payload_sz = PAYLOAD + 1;
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), -EPROTO);
	/* A length shorter than the payload it says follows. */
	put_write(&e, 1, 4096);
	e.hdr.ring_ent_in_out.payload_sz = 8000;
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), -EPROTO);
	/* A length shorter than its own header. */
	put_write(&e, 1, 0);
	memcpy(&in, e.hdr.in_out, sizeof(in));
	in.len = sizeof(in) - 1;
	memcpy(e.hdr.in_out, &in, sizeof(in));
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), -EPROTO);
	/* An operation header longer than op_in holds. */
	put_write(&e, 1, 0);
	memcpy(&in, e.hdr.in_out, sizeof(in));
	in.len = sizeof(in) + FUSE_URING_OP_IN_OUT_SZ + 1;
	memcpy(e.hdr.in_out, &in, sizeof(in));
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), -EPROTO);
	/* A commit id that is not the request's. */
	put_write(&e, 5, 512);
	e.hdr.ring_ent_in_out.commit_id = 6;
	ck_assert_int_eq(ring_msg_request(&e.hdr, e.payload, PAYLOAD, &mem, &len), -EPROTO);
	ck_assert_ptr_null(mem);
	ck_assert_uint_eq(len, 0);
	free(e.slot);
}
END_TEST

START_TEST(test_reply_committed)
{
	struct entry e;
	struct fuse_out_header out = { .len = 0, .error = 0, .unique = 77 }, got;
	char a[100], b[28];
	struct iovec iov[3] = { { &out, sizeof(out) }, { a, sizeof(a) }, { b, sizeof(b) } };

	entry_init(&e);
	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	ck_assert_int_eq(ring_msg_reply(&e.hdr, e.payload, PAYLOAD, iov, 3),
			 sizeof(out) + sizeof(a) + sizeof(b));
	memcpy(&got, e.hdr.in_out, sizeof(got));
	ck_assert_uint_eq(got.unique, 77);
	ck_assert_int_eq(got.error, 0);
	ck_assert_uint_eq(got.len, sizeof(out) + 128);
	ck_assert_uint_eq(e.hdr.ring_ent_in_out.payload_sz, 128);
	ck_assert_int_eq(e.payload[0], 1);
	ck_assert_int_eq(e.payload[99], 1);
	ck_assert_int_eq(e.payload[100], 2);
	ck_assert_int_eq(e.payload[127], 2);
	free(e.slot);
}
END_TEST

/* A read that landed in the payload is replied from there, not copied over
 * itself; one after it in the payload moves to the start. */
START_TEST(test_reply_in_place)
{
	struct entry e;
	struct fuse_out_header out = { .unique = 3 };
	struct iovec iov[2] = { { &out, sizeof(out) }, { NULL, 4096 } };

	entry_init(&e);
	memset(e.payload, 5, 4096);
	iov[1].iov_base = e.payload;
	ck_assert_int_eq(ring_msg_reply(&e.hdr, e.payload, PAYLOAD, iov, 2), sizeof(out) + 4096);
	ck_assert_uint_eq(e.hdr.ring_ent_in_out.payload_sz, 4096);
	ck_assert_int_eq(e.payload[4095], 5);
	/* Overlapping: 4096 bytes from 512 in. */
	memset(e.payload + 512, 6, 4096);
	iov[1].iov_base = e.payload + 512;
	ck_assert_int_eq(ring_msg_reply(&e.hdr, e.payload, PAYLOAD, iov, 2), sizeof(out) + 4096);
	ck_assert_int_eq(e.payload[0], 6);
	ck_assert_int_eq(e.payload[4095], 6);
	free(e.slot);
}
END_TEST

/* A reply the payload cannot hold becomes EIO, with nothing in the payload. */
START_TEST(test_reply_too_large)
{
	struct entry e;
	struct fuse_out_header out = { .unique = 4 }, got;
	char *big = calloc(1, PAYLOAD + 1);
	struct iovec iov[2] = { { &out, sizeof(out) }, { big, PAYLOAD + 1 } };

	entry_init(&e);
	ck_assert_int_eq(ring_msg_reply(&e.hdr, e.payload, PAYLOAD, iov, 2),
			 sizeof(out) + PAYLOAD + 1);
	memcpy(&got, e.hdr.in_out, sizeof(got));
	ck_assert_int_eq(got.error, -EIO);
	ck_assert_uint_eq(got.unique, 4);
	ck_assert_uint_eq(got.len, sizeof(out));
	ck_assert_uint_eq(e.hdr.ring_ent_in_out.payload_sz, 0);
	free(big);
	free(e.slot);
}
END_TEST

static struct fuse_init_out init_arg(uint32_t flags)
{
	return (struct fuse_init_out){ .major = 7, .minor = 41, .max_write = 131072,
				       .flags = flags, .flags2 = 1 };
}

START_TEST(test_init_asks_for_ring)
{
	struct fuse_out_header hdr = { .len = sizeof(hdr) + sizeof(struct fuse_init_out),
				       .unique = 2 }, out;
	struct fuse_init_out arg = init_arg(FUSE_INIT_EXT | FUSE_ASYNC_READ), got;
	struct iovec iov[2] = { { &hdr, sizeof(hdr) }, { &arg, sizeof(arg) } }, v[2];

	ck_assert_int_eq(ring_msg_init_reply(iov, 2, &out, &got, v), 0);
	ck_assert_uint_eq(got.flags2, 1 | (uint32_t)(FUSE_OVER_IO_URING >> 32));
	ck_assert_uint_eq(got.flags, FUSE_INIT_EXT | FUSE_ASYNC_READ);
	ck_assert_uint_eq(got.max_write, 131072);
	ck_assert_ptr_eq(v[0].iov_base, &out);
	ck_assert_uint_eq(v[0].iov_len, sizeof(hdr));
	ck_assert_ptr_eq(v[1].iov_base, &got);
	ck_assert_uint_eq(v[1].iov_len, sizeof(arg));
	ck_assert_uint_eq(out.unique, 2);
	/* libfuse's own reply is left as it was. */
	ck_assert_uint_eq(arg.flags2, 1);
}
END_TEST

/* Not asked in: an error, no FUSE_INIT_EXT (so no flags2), a reply of
 * another shape. */
START_TEST(test_init_not_patched)
{
	struct fuse_out_header hdr = { .unique = 2 }, out;
	struct fuse_init_out arg = init_arg(FUSE_ASYNC_READ), got;
	struct iovec iov[2] = { { &hdr, sizeof(hdr) }, { &arg, sizeof(arg) } }, v[2];

	ck_assert_int_eq(ring_msg_init_reply(iov, 2, &out, &got, v), -EINVAL);
	arg = init_arg(FUSE_INIT_EXT);
	hdr.error = -EPROTO;
	ck_assert_int_eq(ring_msg_init_reply(iov, 2, &out, &got, v), -EINVAL);
	hdr.error = 0;
	ck_assert_int_eq(ring_msg_init_reply(iov, 1, &out, &got, v), -EINVAL);
	/* Older kernels' short INIT reply has no flags2. */
	iov[1].iov_len = offsetof(struct fuse_init_out, flags2);
	ck_assert_int_eq(ring_msg_init_reply(iov, 2, &out, &got, v), -EINVAL);
	iov[1].iov_len = sizeof(arg) + 1;
	ck_assert_int_eq(ring_msg_init_reply(iov, 2, &out, &got, v), -EINVAL);
}
END_TEST

/* Spare entries, which held requests may take, are bounded by what the
 * mount parks, shared among the threads. */
START_TEST(test_spares_bounded)
{
	ck_assert_uint_eq(ring_msg_spares_max(128 << 10, 2), PARK_MAX_BYTES / (128 << 10) / 2);
	ck_assert_uint_eq((size_t)ring_msg_spares_max(128 << 10, 2) * 2 * (128 << 10),
			  PARK_MAX_BYTES);
	ck_assert_uint_eq(ring_msg_spares_max(PARK_MAX_BYTES + 1, 1), 0);
	ck_assert_uint_eq(ring_msg_spares_max(4096, 0), 0);
	ck_assert_uint_eq(ring_msg_spares_max(0, 4), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fuse_ring");
	TCase *tc = tcase_create("messages");

	tcase_add_test(tc, test_request_laid_out);
	tcase_add_test(tc, test_request_without_op_header);
	tcase_add_test(tc, test_request_sizes_checked);
	tcase_add_test(tc, test_reply_committed);
	tcase_add_test(tc, test_reply_in_place);
	tcase_add_test(tc, test_reply_too_large);
	tcase_add_test(tc, test_init_asks_for_ring);
	tcase_add_test(tc, test_init_not_patched);
	tcase_add_test(tc, test_spares_bounded);
	suite_add_tcase(s, tc);
	return run_suite(s, CK_NORMAL);
}
