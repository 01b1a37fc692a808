/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Encoders and decoders for the wire formats of <nvmefs/wire.h>.
 *
 * Whatever came from the target (CQEs) is parsed from raw
 * bytes with explicit lengths, never by casting a buffer of unknown size
 * and alignment to a struct.
 */
#include <errno.h>
#include <string.h>

#include <nvme/util.h>

#include "le_bytes.h"
#include "nvmefs/wire.h"

/* Unaligned little-endian 24-bit loads and stores, byte by byte (the
 * 32-bit ones are le_bytes.h's). */

static uint32_t get_le24(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
}

static void put_le24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
}

static uint8_t sgl_id(enum nvmefs_sgl_type type, enum nvmefs_sgl_subtype sub)
{
	return (uint8_t)(((unsigned int)type << 4) | (unsigned int)sub);
}

/* ------------------------------------------------------------------------ */
/* SGL descriptors                                                          */
/* ------------------------------------------------------------------------ */

static int sgl_keyed(struct nvmefs_sgl *d, uint64_t addr, uint32_t len,
		     uint32_t rkey, enum nvmefs_sgl_subtype sub)
{
	if (len > NVMEFS_SGL_KEYED_MAX_LEN)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	d->addr = nvmefs_cpu_to_le64(addr);
	put_le24(&d->desc[0], len);
	put_le32(&d->desc[3], rkey);
	d->id = sgl_id(NVMEFS_SGL_TYPE_KEYED_DATA_BLOCK, sub);
	return 0;
}

int nvmefs_sgl_keyed(struct nvmefs_sgl *d, uint64_t addr, uint32_t len,
		     uint32_t rkey)
{
	return sgl_keyed(d, addr, len, rkey, NVMEFS_SGL_SUBTYPE_ADDRESS);
}

int nvmefs_sgl_keyed_invalidate(struct nvmefs_sgl *d, uint64_t addr,
				uint32_t len, uint32_t rkey)
{
	return sgl_keyed(d, addr, len, rkey, NVMEFS_SGL_SUBTYPE_INVALIDATE_KEY);
}

void nvmefs_sgl_null(struct nvmefs_sgl *d)
{
	(void)sgl_keyed(d, 0, 0, 0, NVMEFS_SGL_SUBTYPE_ADDRESS);
}

static void sgl_unkeyed(struct nvmefs_sgl *d, uint64_t addr, uint32_t len,
			enum nvmefs_sgl_type type, enum nvmefs_sgl_subtype sub)
{
	memset(d, 0, sizeof(*d));
	d->addr = nvmefs_cpu_to_le64(addr);
	put_le32(&d->desc[0], len);
	d->id = sgl_id(type, sub);
}

void nvmefs_sgl_inline(struct nvmefs_sgl *d, uint64_t offset, uint32_t len)
{
	sgl_unkeyed(d, offset, len, NVMEFS_SGL_TYPE_DATA_BLOCK,
		    NVMEFS_SGL_SUBTYPE_OFFSET);
}

void nvmefs_sgl_last_segment(struct nvmefs_sgl *d, uint64_t addr, uint32_t len,
			     bool is_offset)
{
	sgl_unkeyed(d, addr, len, NVMEFS_SGL_TYPE_LAST_SEGMENT,
		    is_offset ? NVMEFS_SGL_SUBTYPE_OFFSET :
				NVMEFS_SGL_SUBTYPE_ADDRESS);
}

int nvmefs_sgl_decode(const struct nvmefs_sgl *d, struct nvmefs_sgl_info *out)
{
	uint8_t type = nvmefs_sgl_type(d);
	uint8_t sub = nvmefs_sgl_subtype(d);

	memset(out, 0, sizeof(*out));
	out->type = type;
	out->subtype = sub;
	out->addr = nvmefs_le64_to_cpu(d->addr);

	switch (type) {
	case NVMEFS_SGL_TYPE_KEYED_DATA_BLOCK:
		out->length = get_le24(&d->desc[0]);
		out->key = get_le32(&d->desc[3]);
		if (sub != NVMEFS_SGL_SUBTYPE_ADDRESS &&
		    sub != NVMEFS_SGL_SUBTYPE_INVALIDATE_KEY)
			return -EINVAL;
		return 0;
	case NVMEFS_SGL_TYPE_DATA_BLOCK:
	case NVMEFS_SGL_TYPE_SEGMENT:
	case NVMEFS_SGL_TYPE_LAST_SEGMENT:
		out->length = get_le32(&d->desc[0]);
		if (sub != NVMEFS_SGL_SUBTYPE_ADDRESS &&
		    sub != NVMEFS_SGL_SUBTYPE_OFFSET)
			return -EINVAL;
		return 0;
	default:
		out->length = get_le32(&d->desc[0]);
		return -EINVAL;
	}
}

/* ------------------------------------------------------------------------ */
/* SQE and CQE                                                              */
/* ------------------------------------------------------------------------ */

void nvmefs_sqe_init(struct nvmefs_sqe *sqe, uint8_t opcode, uint16_t cid)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = opcode;
	sqe->flags = NVMEFS_SQE_PSDT_SGL_MPTR_CONTIG;
	sqe->cid = nvmefs_cpu_to_le16(cid);
}

const char *nvmefs_cqe_status_str(const struct nvmefs_cqe *cqe)
{
	/*
	 * With fabrics=true libnvme reads SCT 1 codes 0x80.. as the fabrics
	 * (Connect) codes rather than the I/O command set's.  A plain admin or
	 * I/O command never returns those, so passing true is always right here.
	 */
	return nvme_status_to_string(nvmefs_cqe_status(cqe), true);
}

int nvmefs_cqe_errno(const struct nvmefs_cqe *cqe)
{
	if (nvmefs_cqe_ok(cqe))
		return 0;
	return -(int)nvme_status_to_errno(nvmefs_cqe_status(cqe), true);
}

/* ------------------------------------------------------------------------ */
/* Fabrics commands                                                         */
/* ------------------------------------------------------------------------ */

static void fabrics_init(union nvmefs_cmd *cmd, uint16_t cid,
			 enum nvme_fctype fctype)
{
	nvmefs_sqe_init(&cmd->sqe, nvme_admin_fabrics, cid);
	cmd->fabrics.fctype = (uint8_t)fctype;
}

int nvmefs_connect_encode(union nvmefs_cmd *cmd, uint16_t cid, uint16_t qid,
			  uint16_t sqsize, uint8_t cattr, uint32_t kato)
{
	/* A queue needs two slots to tell full from empty: 0's based >= 1. */
	if (sqsize < 1)
		return -EINVAL;
	/* The admin queue holds at most 4096 entries (12-bit AQA fields). */
	if (qid == 0 && sqsize > 4095)
		return -EINVAL;

	fabrics_init(cmd, cid, nvme_fabrics_type_connect);
	cmd->connect.recfmt = nvmefs_cpu_to_le16(NVMEFS_CONNECT_RECFMT);
	cmd->connect.qid = nvmefs_cpu_to_le16(qid);
	cmd->connect.sqsize = nvmefs_cpu_to_le16(sqsize);
	cmd->connect.cattr = cattr;
	cmd->connect.kato = nvmefs_cpu_to_le32(kato);
	return 0;
}

static int copy_nqn(char *dst, const char *src)
{
	size_t len;

	if (!src)
		return -EINVAL;
	len = strnlen(src, NVMF_NQN_SIZE + 1);
	if (len == 0 || len > NVMF_NQN_SIZE)
		return -EINVAL;
	memcpy(dst, src, len);
	return 0;
}

int nvmefs_connect_data_init(struct nvmf_connect_data *data,
			     const uint8_t hostid[16], uint16_t cntlid,
			     const char *subsysnqn, const char *hostnqn)
{
	int ret;

	memset(data, 0, sizeof(*data));
	if (!hostid)
		return -EINVAL;
	memcpy(data->hostid, hostid, sizeof(data->hostid));
	data->cntlid = nvmefs_cpu_to_le16(cntlid);
	ret = copy_nqn(data->subsysnqn, subsysnqn);
	if (!ret)
		ret = copy_nqn(data->hostnqn, hostnqn);
	if (ret)
		memset(data, 0, sizeof(*data));
	return ret;
}

static int prop_attrib(uint32_t offset, unsigned int size, uint8_t *attrib)
{
	switch (size) {
	case 4:
		*attrib = NVMEFS_PROP_ATTRIB_SIZE_4;
		break;
	case 8:
		*attrib = NVMEFS_PROP_ATTRIB_SIZE_8;
		break;
	default:
		return -EINVAL;
	}
	/* Properties are naturally aligned; anything else is a caller bug. */
	if (offset % size)
		return -EINVAL;
	return 0;
}

int nvmefs_prop_set_encode(union nvmefs_cmd *cmd, uint16_t cid,
			   uint32_t offset, unsigned int size, uint64_t value)
{
	uint8_t attrib;
	int ret;

	ret = prop_attrib(offset, size, &attrib);
	if (ret)
		return ret;
	if (size == 4 && value > UINT32_MAX)
		return -EINVAL;

	fabrics_init(cmd, cid, nvme_fabrics_type_property_set);
	cmd->prop_set.attrib = attrib;
	cmd->prop_set.offset = nvmefs_cpu_to_le32(offset);
	cmd->prop_set.value = nvmefs_cpu_to_le64(value);
	return 0;
}

int nvmefs_prop_get_encode(union nvmefs_cmd *cmd, uint16_t cid,
			   uint32_t offset, unsigned int size)
{
	uint8_t attrib;
	int ret;

	ret = prop_attrib(offset, size, &attrib);
	if (ret)
		return ret;

	fabrics_init(cmd, cid, nvme_fabrics_type_property_get);
	cmd->prop_get.attrib = attrib;
	cmd->prop_get.offset = nvmefs_cpu_to_le32(offset);
	return 0;
}
