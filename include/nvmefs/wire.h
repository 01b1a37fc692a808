/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file wire.h
 * @brief On-the-wire formats of NVMe and NVMe-oF that libnvme lacks.
 *
 * libnvme (<nvme/types.h>) already has the Identify structures, the
 * discovery log, struct nvmf_connect_data, the fabrics command types
 * (enum nvme_fctype), opcodes, status codes, the controller register
 * offsets (NVME_REG_*) and field macros (NVME_CAP_*, NVME_CC_*,
 * NVME_CSTS_*): use those.  What it does not have is what an initiator
 * puts on the wire itself: the 64-byte submission queue entry, the 16-byte
 * completion queue entry, SGL descriptors and the fabrics command capsules.
 * Those live here; the RDMA transport's own formats (its RDMA-CM private
 * data, here until 0.2) are in <nvmefs/wire_rdma.h>, and the DH-HMAC-CHAP
 * messages the authentication commands carry (here until 0.2) in
 * <nvmefs/wire_auth.h>.
 *
 * Every multi-byte field is little endian on the wire, whatever the host.
 * Fields are typed nvmefs_le16/32/64 to say so; convert with
 * nvmefs_cpu_to_le*() and nvmefs_le*_to_cpu().  Fields that the specification
 * does not align naturally (the keyed SGL's length and key) are byte arrays,
 * so no structure needs to be packed, and are reached through accessors.
 *
 * Functions return 0 or a negative errno.  The header compiles alone as C99
 * and C11.
 */
#ifndef NVMEFS_WIRE_H
#define NVMEFS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvme/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * _Static_assert is C11; a C99 user still gets the checks through a
 * negative array size.  C99 forbids a typedef twice, so each name is
 * unique in the translation unit: __COUNTER__ (GCC and Clang, which this
 * header needs anyway), as the line alone would not be across the wire
 * headers a program includes together.
 */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define NVMEFS_WIRE_ASSERT(expr, msg) _Static_assert(expr, msg)
#else
#define NVMEFS_WIRE_CAT_(a, b) a##b
#define NVMEFS_WIRE_CAT(a, b) NVMEFS_WIRE_CAT_(a, b)
#define NVMEFS_WIRE_ASSERT(expr, msg)                                     \
	typedef char NVMEFS_WIRE_CAT(nvmefs_wire_assert_, __COUNTER__)[(expr) ? 1 : -1]
#endif

/* ------------------------------------------------------------------------ */
/* Byte order                                                               */
/* ------------------------------------------------------------------------ */

/** A 16-bit value stored little endian. */
typedef uint16_t nvmefs_le16;
/** A 32-bit value stored little endian. */
typedef uint32_t nvmefs_le32;
/** A 64-bit value stored little endian. */
typedef uint64_t nvmefs_le64;

/*
 * <endian.h>'s htole*() are hidden under -std=c99 without _DEFAULT_SOURCE,
 * and the header must compile in that mode, so use the compiler's view.
 */
#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__)
#error "nvmefs/wire.h needs __BYTE_ORDER__ (GCC or Clang)"
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline nvmefs_le16 nvmefs_cpu_to_le16(uint16_t v) { return v; }
static inline nvmefs_le32 nvmefs_cpu_to_le32(uint32_t v) { return v; }
static inline nvmefs_le64 nvmefs_cpu_to_le64(uint64_t v) { return v; }
#else
static inline nvmefs_le16 nvmefs_cpu_to_le16(uint16_t v) { return __builtin_bswap16(v); }
static inline nvmefs_le32 nvmefs_cpu_to_le32(uint32_t v) { return __builtin_bswap32(v); }
static inline nvmefs_le64 nvmefs_cpu_to_le64(uint64_t v) { return __builtin_bswap64(v); }
#endif
/* The swap is its own inverse. */
static inline uint16_t nvmefs_le16_to_cpu(nvmefs_le16 v) { return nvmefs_cpu_to_le16(v); }
static inline uint32_t nvmefs_le32_to_cpu(nvmefs_le32 v) { return nvmefs_cpu_to_le32(v); }
static inline uint64_t nvmefs_le64_to_cpu(nvmefs_le64 v) { return nvmefs_cpu_to_le64(v); }

/* ------------------------------------------------------------------------ */
/* SGL descriptors (NVMe Base spec, "SGL Descriptor Types")                  */
/* ------------------------------------------------------------------------ */

/** SGL descriptor type: the high nibble of the descriptor's last byte. */
enum nvmefs_sgl_type {
	NVMEFS_SGL_TYPE_DATA_BLOCK		= 0x0,
	NVMEFS_SGL_TYPE_BIT_BUCKET		= 0x1,
	NVMEFS_SGL_TYPE_SEGMENT			= 0x2,
	NVMEFS_SGL_TYPE_LAST_SEGMENT		= 0x3,
	NVMEFS_SGL_TYPE_KEYED_DATA_BLOCK	= 0x4,
	NVMEFS_SGL_TYPE_TRANSPORT_DATA_BLOCK	= 0x5,
	NVMEFS_SGL_TYPE_VENDOR			= 0xf,
};

/** SGL descriptor sub type: the low nibble of the descriptor's last byte. */
enum nvmefs_sgl_subtype {
	NVMEFS_SGL_SUBTYPE_ADDRESS		= 0x0,
	/** Address is an offset; for fabrics, into the capsule's data. */
	NVMEFS_SGL_SUBTYPE_OFFSET		= 0x1,
	NVMEFS_SGL_SUBTYPE_TRANSPORT		= 0xa,
	/** Keyed only: the target invalidates the key when it is done. */
	NVMEFS_SGL_SUBTYPE_INVALIDATE_KEY	= 0xf,
};

/** A keyed data block's length is 24 bits wide. */
#define NVMEFS_SGL_KEYED_MAX_LEN 0xffffffu

/**
 * One 16-byte SGL descriptor.
 *
 * Bytes 8..14 differ by type: a 32-bit length and 3 reserved bytes for
 * data blocks and segments, a 24-bit length and a 32-bit key for keyed data
 * blocks.  The key is not 4-byte aligned, so these bytes stay raw; use
 * nvmefs_sgl_decode() or the encoders below.
 */
struct nvmefs_sgl {
	nvmefs_le64	addr;		/**< address, or offset (subtype 1) */
	uint8_t		desc[7];	/**< type specific, see above */
	uint8_t		id;		/**< type << 4 | subtype */
};
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_sgl) == 16, "SGL descriptor is 16 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sgl, addr) == 0, "SGL addr at 0");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sgl, desc) == 8, "SGL length at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sgl, id) == 15, "SGL identifier at 15");

/** A decoded SGL descriptor, in host byte order. */
struct nvmefs_sgl_info {
	uint8_t		type;		/**< enum nvmefs_sgl_type */
	uint8_t		subtype;	/**< enum nvmefs_sgl_subtype */
	uint64_t	addr;
	uint32_t	length;
	uint32_t	key;		/**< keyed data blocks only, else 0 */
};

/**
 * Keyed data block (type 4, subtype 0): the target moves @len bytes at
 * remote address @addr with RDMA READ/WRITE using @rkey.
 * Returns -EINVAL if @len does not fit in 24 bits.
 */
int nvmefs_sgl_keyed(struct nvmefs_sgl *d, uint64_t addr, uint32_t len,
		     uint32_t rkey);
/**
 * Keyed data block with "invalidate key" (type 4, subtype 0xF): as
 * nvmefs_sgl_keyed(), and the target sends its response with
 * SEND_WITH_INVALIDATE for @rkey.  Returns -EINVAL if @len exceeds 24 bits.
 */
int nvmefs_sgl_keyed_invalidate(struct nvmefs_sgl *d, uint64_t addr,
				uint32_t len, uint32_t rkey);
/**
 * The descriptor of a command that moves no data: a keyed data block with
 * address, length and key 0, which is what targets expect over RDMA.
 */
void nvmefs_sgl_null(struct nvmefs_sgl *d);
/**
 * In-capsule data (data block, type 0, subtype 1 "offset"): @len bytes
 * starting @offset bytes into the data that follows the 64-byte SQE in the
 * same capsule.
 */
void nvmefs_sgl_inline(struct nvmefs_sgl *d, uint64_t offset, uint32_t len);
/**
 * Last segment (type 3): points at a list of further descriptors, @len
 * bytes long.  With @is_offset, @addr is an offset into the capsule's data
 * (subtype 1), else an address (subtype 0).
 */
void nvmefs_sgl_last_segment(struct nvmefs_sgl *d, uint64_t addr, uint32_t len,
			     bool is_offset);
/**
 * Decode @d into @out.  Returns -EINVAL for a type/subtype combination this
 * library does not produce (bit bucket, transport, vendor specific, ...);
 * @out is still filled with the raw fields so the caller can report them.
 */
int nvmefs_sgl_decode(const struct nvmefs_sgl *d, struct nvmefs_sgl_info *out);

/** The descriptor type (high nibble of the identifier). */
static inline uint8_t nvmefs_sgl_type(const struct nvmefs_sgl *d)
{
	return (uint8_t)(d->id >> 4);
}

/** The descriptor sub type (low nibble of the identifier). */
static inline uint8_t nvmefs_sgl_subtype(const struct nvmefs_sgl *d)
{
	return (uint8_t)(d->id & 0x0f);
}

/* ------------------------------------------------------------------------ */
/* Submission queue entry                                                    */
/* ------------------------------------------------------------------------ */

/** Size of a submission queue entry and of a capsule's command part. */
#define NVMEFS_SQE_SIZE 64

/** Bits of the SQE flags byte (CDW0 bits 15:8). */
enum nvmefs_sqe_flags {
	NVMEFS_SQE_FUSE_MASK		= 0x03,
	NVMEFS_SQE_PSDT_MASK		= 0xc0,
	NVMEFS_SQE_PSDT_PRP		= 0x00,
	/** SGL for data, MPTR is a contiguous buffer: the only value
	 *  NVMe over Fabrics allows. */
	NVMEFS_SQE_PSDT_SGL_MPTR_CONTIG	= 0x40,
	NVMEFS_SQE_PSDT_SGL_MPTR_SGL	= 0x80,
};

/** The data pointer of an SQE: one SGL descriptor for fabrics. */
union nvmefs_dptr {
	struct nvmefs_sgl	sgl;
	struct {
		nvmefs_le64	prp1;
		nvmefs_le64	prp2;
	} prp;
	uint8_t			raw[16];
};

/** A 64-byte submission queue entry (NVMe Base spec, "Common Command Format"). */
struct nvmefs_sqe {
	uint8_t			opcode;
	uint8_t			flags;	/**< FUSE 1:0, PSDT 7:6 */
	nvmefs_le16		cid;
	nvmefs_le32		nsid;
	nvmefs_le32		cdw2;
	nvmefs_le32		cdw3;
	nvmefs_le64		mptr;
	union nvmefs_dptr	dptr;
	nvmefs_le32		cdw10;
	nvmefs_le32		cdw11;
	nvmefs_le32		cdw12;
	nvmefs_le32		cdw13;
	nvmefs_le32		cdw14;
	nvmefs_le32		cdw15;
};
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_sqe) == NVMEFS_SQE_SIZE, "SQE is 64 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, flags) == 1, "SQE flags at 1");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, cid) == 2, "SQE cid at 2");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, nsid) == 4, "SQE nsid at 4");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, cdw2) == 8, "SQE cdw2 at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, mptr) == 16, "SQE mptr at 16");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, dptr) == 24, "SQE dptr at 24");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, cdw10) == 40, "SQE cdw10 at 40");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_sqe, cdw15) == 60, "SQE cdw15 at 60");

/**
 * Zero @sqe and fill opcode, command id and PSDT=01b, which every command
 * sent over fabrics must carry.
 */
void nvmefs_sqe_init(struct nvmefs_sqe *sqe, uint8_t opcode, uint16_t cid);

/* ------------------------------------------------------------------------ */
/* Completion queue entry                                                    */
/* ------------------------------------------------------------------------ */

/** Size of a completion queue entry, which is the whole RDMA response. */
#define NVMEFS_CQE_SIZE 16

/** Command specific result: DW0 and DW1, or one 64-bit value. */
union nvmefs_cqe_result {
	nvmefs_le64	u64;
	struct {
		nvmefs_le32	dw0;
		nvmefs_le32	dw1;
	} dw;
};

/** A 16-byte completion queue entry. */
struct nvmefs_cqe {
	union nvmefs_cqe_result	result;
	nvmefs_le16		sq_head;
	nvmefs_le16		sq_id;
	nvmefs_le16		cid;
	/** Phase tag in bit 0, the status field in bits 15:1. */
	nvmefs_le16		status;
};
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_cqe) == NVMEFS_CQE_SIZE, "CQE is 16 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_cqe, result.dw.dw1) == 4, "CQE dw1 at 4");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_cqe, sq_head) == 8, "CQE sq_head at 8");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_cqe, sq_id) == 10, "CQE sq_id at 10");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_cqe, cid) == 12, "CQE cid at 12");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_cqe, status) == 14, "CQE status at 14");

static inline uint32_t nvmefs_cqe_dw0(const struct nvmefs_cqe *cqe)
{
	return nvmefs_le32_to_cpu(cqe->result.dw.dw0);
}

static inline uint32_t nvmefs_cqe_dw1(const struct nvmefs_cqe *cqe)
{
	return nvmefs_le32_to_cpu(cqe->result.dw.dw1);
}

/** DW1:DW0 as one value, as Property Get of an 8-byte property returns it. */
static inline uint64_t nvmefs_cqe_result64(const struct nvmefs_cqe *cqe)
{
	return nvmefs_le64_to_cpu(cqe->result.u64);
}

static inline uint16_t nvmefs_cqe_cid(const struct nvmefs_cqe *cqe)
{
	return nvmefs_le16_to_cpu(cqe->cid);
}

/** The phase tag.  Meaningless over fabrics, but a target may set it. */
static inline bool nvmefs_cqe_phase(const struct nvmefs_cqe *cqe)
{
	return nvmefs_le16_to_cpu(cqe->status) & 1;
}

/**
 * The 15-bit status field (bits 15:1 of the CQE's last word, shifted down).
 *
 * This is the value libnvme's helpers take: nvme_status_code(),
 * nvme_status_code_type(), the NVME_SC_DNR/NVME_SC_MORE/NVME_SC_CRD masks
 * and nvme_status_to_string(status, true).
 */
static inline uint16_t nvmefs_cqe_status(const struct nvmefs_cqe *cqe)
{
	return (uint16_t)(nvmefs_le16_to_cpu(cqe->status) >> 1);
}

/** Status Code (SC), bits 7:0 of the status field. */
static inline uint8_t nvmefs_cqe_sc(const struct nvmefs_cqe *cqe)
{
	return (uint8_t)(nvmefs_cqe_status(cqe) & 0xff);
}

/** Status Code Type (SCT), bits 10:8 of the status field: enum nvme_status_field NVME_SCT_*. */
static inline uint8_t nvmefs_cqe_sct(const struct nvmefs_cqe *cqe)
{
	return (uint8_t)((nvmefs_cqe_status(cqe) >> 8) & 0x7);
}

/** Command Retry Delay index (CRD), bits 12:11 of the status field. */
static inline uint8_t nvmefs_cqe_crd(const struct nvmefs_cqe *cqe)
{
	return (uint8_t)((nvmefs_cqe_status(cqe) >> 11) & 0x3);
}

/** More: the controller has more status in the Error Information log. */
static inline bool nvmefs_cqe_more(const struct nvmefs_cqe *cqe)
{
	return (nvmefs_cqe_status(cqe) >> 13) & 1;
}

/** Do Not Retry: the same command would fail again. */
static inline bool nvmefs_cqe_dnr(const struct nvmefs_cqe *cqe)
{
	return (nvmefs_cqe_status(cqe) >> 14) & 1;
}

/** True if the command succeeded (SCT and SC both zero). */
static inline bool nvmefs_cqe_ok(const struct nvmefs_cqe *cqe)
{
	return (nvmefs_cqe_status(cqe) & 0x7ff) == 0;
}

/**
 * Human text for the CQE's status, as libnvme words it, decoding the
 * command specific codes of fabrics commands (Connect etc.).
 */
const char *nvmefs_cqe_status_str(const struct nvmefs_cqe *cqe);

/**
 * The errno closest to the CQE's status (libnvme's mapping), negated;
 * 0 on success.
 */
int nvmefs_cqe_errno(const struct nvmefs_cqe *cqe);

/* ------------------------------------------------------------------------ */
/* Fabrics command capsules (NVMe over Fabrics spec)                         */
/* ------------------------------------------------------------------------ */

/*
 * All fabrics commands use opcode nvme_admin_fabrics (0x7F) with the command
 * type (enum nvme_fctype, nvme_fabrics_type_*) in byte 4, where other
 * commands have the NSID.  The structures below overlay struct nvmefs_sqe.
 */

/** Connect record format 0, the only one defined. */
#define NVMEFS_CONNECT_RECFMT		0
/** Connect data cntlid: any controller, dynamic controller model. */
#define NVMEFS_CNTLID_DYNAMIC		0xffffu
/** Connect data cntlid: any controller, static controller model. */
#define NVMEFS_CNTLID_STATIC_ANY	0xfffeu
/** Connect CATTR bit 2: ask the controller not to track SQ head (SQ flow
 *  control disabled); its completions then carry SQHD 0xFFFF. */
#define NVMEFS_CONNECT_CATTR_DISABLE_SQFLOW (1u << 2)

/** Fields common to all fabrics commands. */
struct nvmefs_fabrics_cmd {
	uint8_t			opcode;		/**< nvme_admin_fabrics */
	uint8_t			flags;		/**< PSDT 7:6 */
	nvmefs_le16		cid;
	uint8_t			fctype;		/**< enum nvme_fctype */
	uint8_t			rsvd5[19];
	struct nvmefs_sgl	sgl;
	uint8_t			specific[24];
};

/** Connect command. */
struct nvmefs_connect_cmd {
	uint8_t			opcode;
	uint8_t			flags;
	nvmefs_le16		cid;
	uint8_t			fctype;		/**< nvme_fabrics_type_connect */
	uint8_t			rsvd5[19];
	struct nvmefs_sgl	sgl;		/**< the 1024-byte connect data */
	nvmefs_le16		recfmt;
	nvmefs_le16		qid;
	nvmefs_le16		sqsize;		/**< 0's based */
	uint8_t			cattr;
	uint8_t			rsvd47;
	nvmefs_le32		kato;		/**< milliseconds, 0 = none */
	uint8_t			rsvd52[12];
};

/** Property Set command. */
struct nvmefs_prop_set_cmd {
	uint8_t			opcode;
	uint8_t			flags;
	nvmefs_le16		cid;
	uint8_t			fctype;		/**< nvme_fabrics_type_property_set */
	uint8_t			rsvd5[35];
	uint8_t			attrib;		/**< bits 2:0: 0 = 4 bytes, 1 = 8 */
	uint8_t			rsvd41[3];
	nvmefs_le32		offset;		/**< NVME_REG_* */
	nvmefs_le64		value;
	uint8_t			rsvd56[8];
};

/** Property Get command. */
struct nvmefs_prop_get_cmd {
	uint8_t			opcode;
	uint8_t			flags;
	nvmefs_le16		cid;
	uint8_t			fctype;		/**< nvme_fabrics_type_property_get */
	uint8_t			rsvd5[35];
	uint8_t			attrib;
	uint8_t			rsvd41[3];
	nvmefs_le32		offset;
	uint8_t			rsvd48[16];
};

/** AUTH_Send and AUTH_Receive (NVMe Base 2.0, 6.3 and 6.4): a message of
 *  the security protocol SECP, TL bytes sent or at most AL received. */
struct nvmefs_auth_cmd {
	uint8_t			opcode;
	uint8_t			flags;
	nvmefs_le16		cid;
	uint8_t			fctype;		/**< nvme_fabrics_type_auth_send/_receive */
	uint8_t			rsvd5[19];
	struct nvmefs_sgl	sgl;		/**< the message */
	uint8_t			rsvd40;
	uint8_t			spsp0;
	uint8_t			spsp1;
	uint8_t			secp;		/**< NVMEFS_AUTH_SECP_DHCHAP */
	nvmefs_le32		len;		/**< TL (send) or AL (receive) */
	uint8_t			rsvd48[16];
};

/** Property size codes of the ATTRIB byte. */
enum nvmefs_prop_attrib {
	NVMEFS_PROP_ATTRIB_SIZE_4	= 0,
	NVMEFS_PROP_ATTRIB_SIZE_8	= 1,
	NVMEFS_PROP_ATTRIB_SIZE_MASK	= 0x7,
};

/** Any 64-byte command, seen the way that fits. */
union nvmefs_cmd {
	struct nvmefs_sqe		sqe;
	struct nvmefs_fabrics_cmd	fabrics;
	struct nvmefs_connect_cmd	connect;
	struct nvmefs_prop_set_cmd	prop_set;
	struct nvmefs_prop_get_cmd	prop_get;
	struct nvmefs_auth_cmd		auth;
	uint8_t				raw[NVMEFS_SQE_SIZE];
};

NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_fabrics_cmd) == NVMEFS_SQE_SIZE, "fabrics cmd is 64 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_fabrics_cmd, fctype) == 4, "fctype at 4");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_fabrics_cmd, sgl) == 24, "fabrics SGL at 24");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_fabrics_cmd, specific) == 40, "fabrics specific at 40");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_connect_cmd) == NVMEFS_SQE_SIZE, "Connect is 64 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, fctype) == 4, "Connect fctype at 4");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, sgl) == 24, "Connect SGL at 24");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, recfmt) == 40, "Connect recfmt at 40");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, qid) == 42, "Connect qid at 42");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, sqsize) == 44, "Connect sqsize at 44");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, cattr) == 46, "Connect cattr at 46");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_connect_cmd, kato) == 48, "Connect kato at 48");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_prop_set_cmd) == NVMEFS_SQE_SIZE, "Property Set is 64 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_prop_set_cmd, attrib) == 40, "Property Set attrib at 40");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_prop_set_cmd, offset) == 44, "Property Set offset at 44");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_prop_set_cmd, value) == 48, "Property Set value at 48");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_prop_get_cmd) == NVMEFS_SQE_SIZE, "Property Get is 64 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_prop_get_cmd, attrib) == 40, "Property Get attrib at 40");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_prop_get_cmd, offset) == 44, "Property Get offset at 44");
NVMEFS_WIRE_ASSERT(sizeof(struct nvmefs_auth_cmd) == NVMEFS_SQE_SIZE, "AUTH_Send/Receive is 64 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_auth_cmd, spsp0) == 41, "AUTH SPSP0 at 41");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_auth_cmd, secp) == 43, "AUTH SECP at 43");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmefs_auth_cmd, len) == 44, "AUTH TL/AL at 44");
NVMEFS_WIRE_ASSERT(sizeof(union nvmefs_cmd) == NVMEFS_SQE_SIZE, "command union is 64 bytes");
/* libnvme owns the Connect data; make sure it is the 1024 bytes on the wire. */
NVMEFS_WIRE_ASSERT(sizeof(struct nvmf_connect_data) == 1024, "libnvme Connect data is 1024 bytes");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmf_connect_data, cntlid) == 16, "Connect data cntlid at 16");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmf_connect_data, subsysnqn) == 256, "Connect data subnqn at 256");
NVMEFS_WIRE_ASSERT(offsetof(struct nvmf_connect_data, hostnqn) == 512, "Connect data hostnqn at 512");

/*
 * The encoders below zero the whole command first and leave the data SGL
 * zeroed: the transport owns it, and fills it either with the descriptor of
 * the data (the Connect data) or with nvmefs_sgl_null() for commands that
 * move none, as Linux hosts do.
 */

/**
 * Encode a Connect command into @cmd.
 *
 * @qid:    0 for the admin queue
 * @sqsize: 0's based; must be at least 1, and below 4096 for the admin queue
 * @cattr:  NVMEFS_CONNECT_CATTR_*
 * @kato:   keep-alive timeout in milliseconds, 0 for none
 *
 * Returns -EINVAL for an sqsize the controller is bound to refuse.
 */
int nvmefs_connect_encode(union nvmefs_cmd *cmd, uint16_t cid, uint16_t qid,
			  uint16_t sqsize, uint8_t cattr, uint32_t kato);

/**
 * Fill the 1024-byte Connect data.  NQNs longer than NVMF_NQN_SIZE (223)
 * bytes, or empty, give -EINVAL and leave @data zeroed.
 */
int nvmefs_connect_data_init(struct nvmf_connect_data *data,
			     const uint8_t hostid[16], uint16_t cntlid,
			     const char *subsysnqn, const char *hostnqn);

/**
 * The size a property has, from its offset (libnvme's nvme_is_64bit_reg()):
 * 8 for CAP, ASQ, ACQ..., 4 otherwise.
 */
static inline unsigned int nvmefs_prop_size(uint32_t offset)
{
	return nvme_is_64bit_reg(offset) ? 8u : 4u;
}

/**
 * Encode a Property Set of @size (4 or 8) bytes at @offset (NVME_REG_*).
 * Returns -EINVAL for another size, a misaligned offset, or a value that
 * does not fit in a 4-byte property.
 */
int nvmefs_prop_set_encode(union nvmefs_cmd *cmd, uint16_t cid,
			   uint32_t offset, unsigned int size, uint64_t value);

/**
 * Encode a Property Get of @size (4 or 8) bytes at @offset.  The value
 * comes back in the CQE: nvmefs_cqe_dw0() or nvmefs_cqe_result64().
 * Returns -EINVAL for another size or a misaligned offset.
 */
int nvmefs_prop_get_encode(union nvmefs_cmd *cmd, uint16_t cid,
			   uint32_t offset, unsigned int size);

/*
 * Register fields: libnvme has them, e.g. NVME_CAP_MQES(cap), NVME_CAP_TO(cap),
 * NVME_CAP_DSTRD(cap), NVME_CAP_CSS(cap), NVME_CC_EN(cc), NVME_CSTS_RDY(csts),
 * NVME_CSTS_SHST(csts), and NVME_SET(value, CC_IOSQES) to build CC.  Only the
 * whole-register conveniences are here.
 */

/**
 * The CC value that enables a controller with the NVM command set,
 * round-robin arbitration, 2^(12 + @mps) byte pages and 64/16-byte SQ/CQ
 * entries, which is what every fabrics controller uses.
 */
static inline uint32_t nvmefs_cc_enable_value(unsigned int mps)
{
	return (uint32_t)(NVME_SET(1u, CC_EN) |
			  NVME_SET((unsigned int)NVME_CC_CSS_NVM, CC_CSS) |
			  NVME_SET(mps, CC_MPS) |
			  NVME_SET((unsigned int)NVME_CC_AMS_RR, CC_AMS) |
			  NVME_SET((unsigned int)NVME_CC_SHN_NONE, CC_SHN) |
			  NVME_SET(6u, CC_IOSQES) |	/* 2^6 = 64 bytes */
			  NVME_SET(4u, CC_IOCQES));	/* 2^4 = 16 bytes */
}

/** CAP.TO is in units of 500 ms; the controller's ready timeout in ms. */
static inline uint32_t nvmefs_cap_timeout_ms(uint64_t cap)
{
	return (uint32_t)NVME_CAP_TO(cap) * 500u;
}

/* ------------------------------------------------------------------------ */
/* Connect response (CQE DW0)                                                */
/* ------------------------------------------------------------------------ */

/** AUTHREQ bit: authentication transaction required (DW0 bit 17). */
#define NVMEFS_CONNECT_AUTHREQ_ATR	(1u << 1)
/** AUTHREQ bit: authentication with secure channel required (DW0 bit 18). */
#define NVMEFS_CONNECT_AUTHREQ_ASCR	(1u << 2)

/** The controller id a successful admin Connect assigned. */
static inline uint16_t nvmefs_connect_rsp_cntlid(const struct nvmefs_cqe *cqe)
{
	return (uint16_t)(nvmefs_cqe_dw0(cqe) & 0xffff);
}

/** AUTHREQ (NVMEFS_CONNECT_AUTHREQ_*) of a successful Connect. */
static inline uint16_t nvmefs_connect_rsp_authreq(const struct nvmefs_cqe *cqe)
{
	return (uint16_t)(nvmefs_cqe_dw0(cqe) >> 16);
}

/**
 * After "Connect Invalid Parameters": the byte offset of the offending field
 * (IPO), in the SQE or, if nvmefs_connect_rsp_iattr() is true, in the
 * connect data.
 */
static inline uint16_t nvmefs_connect_rsp_ipo(const struct nvmefs_cqe *cqe)
{
	return (uint16_t)(nvmefs_cqe_dw0(cqe) & 0xffff);
}

/** After "Connect Invalid Parameters": true if IPO points into the data. */
static inline bool nvmefs_connect_rsp_iattr(const struct nvmefs_cqe *cqe)
{
	return (nvmefs_cqe_dw0(cqe) >> 16) & 1;
}

/**
 * Whether a discovery log entry's TREQ (bits 1:0; bit 2 is SQ flow control)
 * says that its controller requires a secure channel.
 */
static inline bool nvmefs_disc_entry_requires_secure_channel(const struct nvmf_disc_log_entry *e)
{
	return (e->treq & 0x3) == NVMF_TREQ_REQUIRED;
}

/**
 * Since 0.2.  Whether a discovery log entry's port runs TLS: NVMe/TCP with
 * a TSAS security type other than none, or a secure channel required, as
 * libnvme's connect-all decides to connect with TLS.
 */
static inline bool nvmefs_disc_entry_tls(const struct nvmf_disc_log_entry *e)
{
	return e->trtype == NVMF_TRTYPE_TCP &&
	       (e->tsas.tcp.sectype != NVMF_TCP_SECTYPE_NONE ||
		nvmefs_disc_entry_requires_secure_channel(e));
}

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_WIRE_H */
