/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvme-cli 2.3's output formats, field for field.  One job, kept in one
 * file past 700 lines on purpose: every format here is checked against
 * nvme-cli's own output by check_output, and a split would only scatter
 * one table of formats across files.
 *
 * The formats were taken from nvme-cli 2.3 itself (its format strings and
 * the code around them), and check_output compares this file's output with
 * what nvme-cli printed for the same bytes.  nvme-cli's quirks are kept on
 * purpose, because scripts parse them: the tab in "nsattr\t:", the trailing
 * space after an LBA format that is not in use, 32-bit values printed with
 * %d (negative past 2^31) and put into JSON as signed 32-bit integers, JSON
 * lbafs covering NLBAF only while the text covers NLBAF + NULBAF, the ns-descs
 * walk adding 5 to the previous length after a CSI descriptor, discovery
 * subnqn trimmed in JSON (to 223 bytes) but not in text, adrfam blank in
 * text when traddr is.  Where nvme-cli would read past the data it was given
 * (malformed NPSS, descriptor lists, unterminated strings), this stops at
 * the end instead.
 *
 * One job, printing what nvme-cli prints: the file is long because
 * Identify Controller and Namespace have that many fields, each written
 * once as text and once as JSON, side by side so that the two cannot drift.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <string.h>

#include <nvme/fabrics.h>
#include <nvme/types.h>
#include <nvme/util.h>

#include "../common/json.h"
#include "output.h"
#include "../common/text.h"

int output_format_parse(const char *name, enum output_format *fmt)
{
	if (!strcmp(name, "normal"))
		*fmt = OUTPUT_NORMAL;
	else if (!strcmp(name, "json"))
		*fmt = OUTPUT_JSON;
	else
		return -EINVAL;
	return 0;
}

/* nvme-cli passes u32 fields to json_object_new_int(), an int32_t. */
static int32_t s32(uint32_t v)
{
	return (int32_t)v;
}

static const char *u128(const uint8_t le[16], char buf[JSON_U128_STRLEN])
{
	const struct lconv *lc = localeconv();

	return json_u128_str(le, lc->thousands_sep ? lc->thousands_sep : "", buf);
}

static void uuid_str(const uint8_t uuid[NVME_UUID_LEN], char str[NVME_UUID_LEN_STRING])
{
	unsigned char copy[NVME_UUID_LEN];

	/* libnvme's prototype is not const-correct. */
	memcpy(copy, uuid, sizeof(copy));
	nvme_uuid_to_string(copy, str);
}

static void hex_str(const uint8_t *p, size_t n, char *str)
{
	for (size_t i = 0; i < n; i++)
		snprintf(str + 2 * i, 3, "%02x", p[i]);
	str[2 * n] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Discovery log                                                            */
/* ------------------------------------------------------------------------ */

static void disc_normal(FILE *out, const struct nvmf_discovery_log *log, uint64_t nrec)
{
	char trsvcid[NVMF_TRSVCID_SIZE + 1], traddr[NVMF_TRADDR_SIZE + 1];
	char safe[TEXT_ESCAPED_SIZE(NVME_NQN_LENGTH)];

	fprintf(out, "\nDiscovery Log Number of Records %d, Generation counter %" PRIu64 "\n",
		(int)nrec, le64toh(log->genctr));
	for (uint64_t i = 0; i < nrec; i++) {
		const struct nvmf_disc_log_entry *e = &log->entries[i];

		/* nvme-cli trims trsvcid and traddr here, not subnqn. */
		text_field(trsvcid, sizeof(trsvcid), e->trsvcid, sizeof(e->trsvcid));
		text_field(traddr, sizeof(traddr), e->traddr, sizeof(e->traddr));

		fprintf(out, "=====Discovery Log Entry %d======\n", (int)i);
		fprintf(out, "trtype:  %s\n", nvmf_trtype_str(e->trtype));
		fprintf(out, "adrfam:  %s\n", traddr[0] ? nvmf_adrfam_str(e->adrfam) : "");
		fprintf(out, "subtype: %s\n", nvmf_subtype_str(e->subtype));
		fprintf(out, "treq:    %s\n", nvmf_treq_str(e->treq));
		fprintf(out, "portid:  %d\n", le16toh(e->portid));
		text_escape(safe, sizeof(safe), trsvcid, sizeof(trsvcid));
		fprintf(out, "trsvcid: %s\n", safe);
		text_escape(safe, sizeof(safe), e->subnqn, sizeof(e->subnqn));
		fprintf(out, "subnqn:  %s\n", safe);
		text_escape(safe, sizeof(safe), traddr, sizeof(traddr));
		fprintf(out, "traddr:  %s\n", safe);
		fprintf(out, "eflags:  %s\n", nvmf_eflags_str(le16toh(e->eflags)));
		switch (e->trtype) {
		case NVMF_TRTYPE_RDMA:
			fprintf(out, "rdma_prtype: %s\n", nvmf_prtype_str(e->tsas.rdma.prtype));
			fprintf(out, "rdma_qptype: %s\n", nvmf_qptype_str(e->tsas.rdma.qptype));
			fprintf(out, "rdma_cms:    %s\n", nvmf_cms_str(e->tsas.rdma.cms));
			fprintf(out, "rdma_pkey: 0x%04x\n", le16toh(e->tsas.rdma.pkey));
			break;
		case NVMF_TRTYPE_TCP:
			fprintf(out, "sectype: %s\n", nvmf_sectype_str(e->tsas.tcp.sectype));
			break;
		}
	}
}

static void disc_json(FILE *out, const struct nvmf_discovery_log *log, uint64_t nrec,
		      bool compact)
{
	char trsvcid[NVMF_TRSVCID_SIZE + 1], subnqn[NVME_NQN_LENGTH + 1];
	char traddr[NVMF_TRADDR_SIZE + 1];
	struct json j;

	if (compact)
		json_init_compact(&j, out);
	else
		json_init(&j, out);
	json_object_begin(&j, NULL);
	json_uint(&j, "genctr", le64toh(log->genctr));
	json_array_begin(&j, "records");
	for (uint64_t i = 0; i < nrec; i++) {
		const struct nvmf_disc_log_entry *e = &log->entries[i];

		text_field(trsvcid, sizeof(trsvcid), e->trsvcid, sizeof(e->trsvcid));
		text_field(subnqn, sizeof(subnqn), e->subnqn, sizeof(e->subnqn));
		text_field(traddr, sizeof(traddr), e->traddr, sizeof(e->traddr));

		json_object_begin(&j, NULL);
		json_string(&j, "trtype", nvmf_trtype_str(e->trtype));
		json_string(&j, "adrfam", nvmf_adrfam_str(e->adrfam));
		json_string(&j, "subtype", nvmf_subtype_str(e->subtype));
		json_string(&j, "treq", nvmf_treq_str(e->treq));
		json_int(&j, "portid", le16toh(e->portid));
		json_string(&j, "trsvcid", trsvcid);
		json_string(&j, "subnqn", subnqn);
		json_string(&j, "traddr", traddr);
		json_string(&j, "eflags", nvmf_eflags_str(le16toh(e->eflags)));
		switch (e->trtype) {
		case NVMF_TRTYPE_RDMA:
			json_string(&j, "rdma_prtype", nvmf_prtype_str(e->tsas.rdma.prtype));
			json_string(&j, "rdma_qptype", nvmf_qptype_str(e->tsas.rdma.qptype));
			json_string(&j, "rdma_cms", nvmf_cms_str(e->tsas.rdma.cms));
			json_int(&j, "rdma_pkey", le16toh(e->tsas.rdma.pkey));
			break;
		case NVMF_TRTYPE_TCP:
			json_string(&j, "sectype", nvmf_sectype_str(e->tsas.tcp.sectype));
			break;
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	fputc('\n', out);
}

void print_discovery_log(FILE *out, const struct nvmf_discovery_log *log,
			 uint64_t nrec, enum output_format fmt)
{
	if (fmt == OUTPUT_JSON)
		disc_json(out, log, nrec, false);
	else
		disc_normal(out, log, nrec);
}

void print_discovery_log_line(FILE *out, const struct nvmf_discovery_log *log, uint64_t nrec)
{
	disc_json(out, log, nrec, true);
}

/* ------------------------------------------------------------------------ */
/* Identify Controller                                                      */
/* ------------------------------------------------------------------------ */

static void ps_power(FILE *out, uint16_t power, unsigned int scale)
{
	switch (scale & 3) {
	case 0:
		fputc('-', out);
		break;
	case 1:
		fprintf(out, "%01u.%04uW", power / 10000u, power % 10000u);
		break;
	case 2:
		fprintf(out, "%01u.%02uW", power / 100u, power % 100u);
		break;
	default:
		fputs("reserved", out);
	}
}

static const char *ps_workload(uint8_t apws)
{
	switch (apws & 7) {
	case 0: return "-";
	case 1: return "1MiB 32 RW, 30s idle";
	case 2: return "80K 128KiB SW";
	default: return "reserved";
	}
}

/* NPSS is 0's based over psd[32]; nvme-cli trusts it, we stop at the array. */
static unsigned int nr_power_states(const struct nvme_id_ctrl *id)
{
	unsigned int n = id->npss + 1u;
	unsigned int max = sizeof(id->psd) / sizeof(id->psd[0]);

	return n < max ? n : max;
}

static void id_ctrl_normal(FILE *out, const struct nvme_id_ctrl *id)
{
	char buf[JSON_U128_STRLEN], fguid[NVME_UUID_LEN_STRING];
	char safe[TEXT_ESCAPED_SIZE(sizeof(id->subnqn))];

	uuid_str(id->fguid, fguid);
	fprintf(out, "NVME Identify Controller:\n");
	fprintf(out, "vid       : %#x\n", le16toh(id->vid));
	fprintf(out, "ssvid     : %#x\n", le16toh(id->ssvid));
	text_escape(safe, sizeof(safe), id->sn, sizeof(id->sn));
	fprintf(out, "sn        : %s\n", safe);
	text_escape(safe, sizeof(safe), id->mn, sizeof(id->mn));
	fprintf(out, "mn        : %s\n", safe);
	text_escape(safe, sizeof(safe), id->fr, sizeof(id->fr));
	fprintf(out, "fr        : %s\n", safe);
	fprintf(out, "rab       : %d\n", id->rab);
	fprintf(out, "ieee      : %02x%02x%02x\n", id->ieee[2], id->ieee[1], id->ieee[0]);
	fprintf(out, "cmic      : %#x\n", id->cmic);
	fprintf(out, "mdts      : %d\n", id->mdts);
	fprintf(out, "cntlid    : %#x\n", le16toh(id->cntlid));
	fprintf(out, "ver       : %#x\n", le32toh(id->ver));
	fprintf(out, "rtd3r     : %#x\n", le32toh(id->rtd3r));
	fprintf(out, "rtd3e     : %#x\n", le32toh(id->rtd3e));
	fprintf(out, "oaes      : %#x\n", le32toh(id->oaes));
	fprintf(out, "ctratt    : %#x\n", le32toh(id->ctratt));
	fprintf(out, "rrls      : %#x\n", le16toh(id->rrls));
	fprintf(out, "cntrltype : %d\n", id->cntrltype);
	fprintf(out, "fguid     : %s\n", fguid);
	fprintf(out, "crdt1     : %u\n", le16toh(id->crdt1));
	fprintf(out, "crdt2     : %u\n", le16toh(id->crdt2));
	fprintf(out, "crdt3     : %u\n", le16toh(id->crdt3));
	fprintf(out, "nvmsr     : %u\n", id->nvmsr);
	fprintf(out, "vwci      : %u\n", id->vwci);
	fprintf(out, "mec       : %u\n", id->mec);
	fprintf(out, "oacs      : %#x\n", le16toh(id->oacs));
	fprintf(out, "acl       : %d\n", id->acl);
	fprintf(out, "aerl      : %d\n", id->aerl);
	fprintf(out, "frmw      : %#x\n", id->frmw);
	fprintf(out, "lpa       : %#x\n", id->lpa);
	fprintf(out, "elpe      : %d\n", id->elpe);
	fprintf(out, "npss      : %d\n", id->npss);
	fprintf(out, "avscc     : %#x\n", id->avscc);
	fprintf(out, "apsta     : %#x\n", id->apsta);
	fprintf(out, "wctemp    : %d\n", le16toh(id->wctemp));
	fprintf(out, "cctemp    : %d\n", le16toh(id->cctemp));
	fprintf(out, "mtfa      : %d\n", le16toh(id->mtfa));
	fprintf(out, "hmpre     : %d\n", s32(le32toh(id->hmpre)));
	fprintf(out, "hmmin     : %d\n", s32(le32toh(id->hmmin)));
	fprintf(out, "tnvmcap   : %s\n", u128(id->tnvmcap, buf));
	fprintf(out, "unvmcap   : %s\n", u128(id->unvmcap, buf));
	fprintf(out, "rpmbs     : %#x\n", le32toh(id->rpmbs));
	fprintf(out, "edstt     : %d\n", le16toh(id->edstt));
	fprintf(out, "dsto      : %d\n", id->dsto);
	fprintf(out, "fwug      : %d\n", id->fwug);
	fprintf(out, "kas       : %d\n", le16toh(id->kas));
	fprintf(out, "hctma     : %#x\n", le16toh(id->hctma));
	fprintf(out, "mntmt     : %d\n", le16toh(id->mntmt));
	fprintf(out, "mxtmt     : %d\n", le16toh(id->mxtmt));
	fprintf(out, "sanicap   : %#x\n", le32toh(id->sanicap));
	fprintf(out, "hmminds   : %u\n", le32toh(id->hmminds));
	fprintf(out, "hmmaxd    : %d\n", le16toh(id->hmmaxd));
	fprintf(out, "nsetidmax : %d\n", le16toh(id->nsetidmax));
	fprintf(out, "endgidmax : %d\n", le16toh(id->endgidmax));
	fprintf(out, "anatt     : %d\n", id->anatt);
	fprintf(out, "anacap    : %d\n", id->anacap);
	fprintf(out, "anagrpmax : %u\n", le32toh(id->anagrpmax));
	fprintf(out, "nanagrpid : %u\n", le32toh(id->nanagrpid));
	fprintf(out, "pels      : %u\n", le32toh(id->pels));
	fprintf(out, "domainid  : %d\n", le16toh(id->domainid));
	fprintf(out, "megcap    : %s\n", u128(id->megcap, buf));
	fprintf(out, "sqes      : %#x\n", id->sqes);
	fprintf(out, "cqes      : %#x\n", id->cqes);
	fprintf(out, "maxcmd    : %d\n", le16toh(id->maxcmd));
	fprintf(out, "nn        : %d\n", s32(le32toh(id->nn)));
	fprintf(out, "oncs      : %#x\n", le16toh(id->oncs));
	fprintf(out, "fuses     : %#x\n", le16toh(id->fuses));
	fprintf(out, "fna       : %#x\n", id->fna);
	fprintf(out, "vwc       : %#x\n", id->vwc);
	fprintf(out, "awun      : %d\n", le16toh(id->awun));
	fprintf(out, "awupf     : %d\n", le16toh(id->awupf));
	fprintf(out, "icsvscc   : %d\n", id->icsvscc);
	fprintf(out, "nwpc      : %d\n", id->nwpc);
	fprintf(out, "acwu      : %d\n", le16toh(id->acwu));
	fprintf(out, "ocfs      : %#x\n", le16toh(id->ocfs));
	fprintf(out, "sgls      : %#x\n", le32toh(id->sgls));
	fprintf(out, "mnan      : %u\n", le32toh(id->mnan));
	fprintf(out, "maxdna    : %s\n", u128(id->maxdna, buf));
	fprintf(out, "maxcna    : %u\n", le32toh(id->maxcna));
	text_escape(safe, sizeof(safe), id->subnqn, sizeof(id->subnqn));
	fprintf(out, "subnqn    : %s\n", safe);
	fprintf(out, "ioccsz    : %u\n", le32toh(id->ioccsz));
	fprintf(out, "iorcsz    : %u\n", le32toh(id->iorcsz));
	fprintf(out, "icdoff    : %d\n", le16toh(id->icdoff));
	fprintf(out, "fcatt     : %#x\n", id->fcatt);
	fprintf(out, "msdbd     : %d\n", id->msdbd);
	fprintf(out, "ofcs      : %d\n", le16toh(id->ofcs));

	for (unsigned int i = 0; i < nr_power_states(id); i++) {
		const struct nvme_id_psd *ps = &id->psd[i];
		uint16_t mp = le16toh(ps->mp);

		fprintf(out, "ps   %4d : mp:", (int)i);
		if (ps->flags & NVME_PSD_FLAGS_MXPS)
			fprintf(out, "%01u.%04uW ", mp / 10000u, mp % 10000u);
		else
			fprintf(out, "%01u.%02uW ", mp / 100u, mp % 100u);
		if (ps->flags & NVME_PSD_FLAGS_NOPS)
			fputs("non-", out);
		fprintf(out, "operational enlat:%d exlat:%d rrt:%d rrl:%d\n"
			"            rwt:%d rwl:%d idle_power:",
			s32(le32toh(ps->enlat)), s32(le32toh(ps->exlat)),
			ps->rrt, ps->rrl, ps->rwt, ps->rwl);
		ps_power(out, le16toh(ps->idlp), ps->ips >> 6);
		fputs(" active_power:", out);
		ps_power(out, le16toh(ps->actp), ps->apws >> 6);
		fprintf(out, "\n            active_power_workload:%s\n", ps_workload(ps->apws));
	}
}

/* nvme-cli copies sn, mn, fr and subnqn with "%-.*s": up to a NUL. */
static const char *id_str(const char *s, size_t size, char *buf)
{
	size_t n = strnlen(s, size);

	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static void id_ctrl_json(FILE *out, const struct nvme_id_ctrl *id)
{
	char str[sizeof(id->subnqn) + 1], buf[JSON_U128_STRLEN];
	char fguid[NVME_UUID_LEN_STRING];
	struct json j;

	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_int(&j, "vid", le16toh(id->vid));
	json_int(&j, "ssvid", le16toh(id->ssvid));
	json_string(&j, "sn", id_str(id->sn, sizeof(id->sn), str));
	json_string(&j, "mn", id_str(id->mn, sizeof(id->mn), str));
	json_string(&j, "fr", id_str(id->fr, sizeof(id->fr), str));
	json_int(&j, "rab", id->rab);
	json_int(&j, "ieee", id->ieee[2] << 16 | id->ieee[1] << 8 | id->ieee[0]);
	json_int(&j, "cmic", id->cmic);
	json_int(&j, "mdts", id->mdts);
	json_int(&j, "cntlid", le16toh(id->cntlid));
	json_int(&j, "ver", s32(le32toh(id->ver)));
	json_int(&j, "rtd3r", s32(le32toh(id->rtd3r)));
	json_int(&j, "rtd3e", s32(le32toh(id->rtd3e)));
	json_int(&j, "oaes", s32(le32toh(id->oaes)));
	json_int(&j, "ctratt", s32(le32toh(id->ctratt)));
	json_int(&j, "rrls", le16toh(id->rrls));
	json_int(&j, "cntrltype", id->cntrltype);
	uuid_str(id->fguid, fguid);
	json_string(&j, "fguid", fguid);
	json_int(&j, "crdt1", le16toh(id->crdt1));
	json_int(&j, "crdt2", le16toh(id->crdt2));
	json_int(&j, "crdt3", le16toh(id->crdt3));
	json_int(&j, "nvmsr", id->nvmsr);
	json_int(&j, "vwci", id->vwci);
	json_int(&j, "mec", id->mec);
	json_int(&j, "oacs", le16toh(id->oacs));
	json_int(&j, "acl", id->acl);
	json_int(&j, "aerl", id->aerl);
	json_int(&j, "frmw", id->frmw);
	json_int(&j, "lpa", id->lpa);
	json_int(&j, "elpe", id->elpe);
	json_int(&j, "npss", id->npss);
	json_int(&j, "avscc", id->avscc);
	json_int(&j, "apsta", id->apsta);
	json_int(&j, "wctemp", le16toh(id->wctemp));
	json_int(&j, "cctemp", le16toh(id->cctemp));
	json_int(&j, "mtfa", le16toh(id->mtfa));
	json_int(&j, "hmpre", s32(le32toh(id->hmpre)));
	json_int(&j, "hmmin", s32(le32toh(id->hmmin)));
	json_string(&j, "tnvmcap", u128(id->tnvmcap, buf));
	json_string(&j, "unvmcap", u128(id->unvmcap, buf));
	json_int(&j, "rpmbs", s32(le32toh(id->rpmbs)));
	json_int(&j, "edstt", le16toh(id->edstt));
	json_int(&j, "dsto", id->dsto);
	json_int(&j, "fwug", id->fwug);
	json_int(&j, "kas", le16toh(id->kas));
	json_int(&j, "hctma", le16toh(id->hctma));
	json_int(&j, "mntmt", le16toh(id->mntmt));
	json_int(&j, "mxtmt", le16toh(id->mxtmt));
	json_int(&j, "sanicap", s32(le32toh(id->sanicap)));
	json_int(&j, "hmminds", s32(le32toh(id->hmminds)));
	json_int(&j, "hmmaxd", le16toh(id->hmmaxd));
	json_int(&j, "nsetidmax", le16toh(id->nsetidmax));
	json_int(&j, "endgidmax", le16toh(id->endgidmax));
	json_int(&j, "anatt", id->anatt);
	json_int(&j, "anacap", id->anacap);
	json_int(&j, "anagrpmax", s32(le32toh(id->anagrpmax)));
	json_int(&j, "nanagrpid", s32(le32toh(id->nanagrpid)));
	json_int(&j, "pels", s32(le32toh(id->pels)));
	json_int(&j, "domainid", le16toh(id->domainid));
	json_string(&j, "megcap", u128(id->megcap, buf));
	json_int(&j, "sqes", id->sqes);
	json_int(&j, "cqes", id->cqes);
	json_int(&j, "maxcmd", le16toh(id->maxcmd));
	json_int(&j, "nn", s32(le32toh(id->nn)));
	json_int(&j, "oncs", le16toh(id->oncs));
	json_int(&j, "fuses", le16toh(id->fuses));
	json_int(&j, "fna", id->fna);
	json_int(&j, "vwc", id->vwc);
	json_int(&j, "awun", le16toh(id->awun));
	json_int(&j, "awupf", le16toh(id->awupf));
	json_int(&j, "icsvscc", id->icsvscc);
	json_int(&j, "nwpc", id->nwpc);
	json_int(&j, "acwu", le16toh(id->acwu));
	json_int(&j, "ocfs", le16toh(id->ocfs));
	json_int(&j, "sgls", s32(le32toh(id->sgls)));
	json_int(&j, "mnan", s32(le32toh(id->mnan)));
	json_string(&j, "maxdna", u128(id->maxdna, buf));
	json_int(&j, "maxcna", s32(le32toh(id->maxcna)));
	if (id_str(id->subnqn, sizeof(id->subnqn), str)[0])
		json_string(&j, "subnqn", str);
	json_int(&j, "ioccsz", s32(le32toh(id->ioccsz)));
	json_int(&j, "iorcsz", s32(le32toh(id->iorcsz)));
	json_int(&j, "icdoff", le16toh(id->icdoff));
	json_int(&j, "fcatt", id->fcatt);
	json_int(&j, "msdbd", id->msdbd);
	json_int(&j, "ofcs", le16toh(id->ofcs));

	json_array_begin(&j, "psds");
	for (unsigned int i = 0; i < nr_power_states(id); i++) {
		const struct nvme_id_psd *ps = &id->psd[i];

		json_object_begin(&j, NULL);
		json_int(&j, "max_power", le16toh(ps->mp));
		json_int(&j, "flags", ps->flags);
		json_int(&j, "entry_lat", s32(le32toh(ps->enlat)));
		json_int(&j, "exit_lat", s32(le32toh(ps->exlat)));
		json_int(&j, "read_tput", ps->rrt);
		json_int(&j, "read_lat", ps->rrl);
		json_int(&j, "write_tput", ps->rwt);
		json_int(&j, "write_lat", ps->rwl);
		json_int(&j, "idle_power", le16toh(ps->idlp));
		json_int(&j, "idle_scale", ps->ips >> 6);
		json_int(&j, "active_power", le16toh(ps->actp));
		json_int(&j, "active_power_work", ps->apws & 7);
		json_int(&j, "active_scale", ps->apws >> 6);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	fputc('\n', out);
}

void print_id_ctrl(FILE *out, const struct nvme_id_ctrl *id,
		   enum output_format fmt)
{
	if (fmt == OUTPUT_JSON)
		id_ctrl_json(out, id);
	else
		id_ctrl_normal(out, id);
}

/* ------------------------------------------------------------------------ */
/* Identify Namespace                                                       */
/* ------------------------------------------------------------------------ */

/*
 * LBA format @i read from the raw structure: the text walks NLBAF + NULBAF
 * formats, which can index past lbaf[63] (still inside the 4 KiB data).
 */
static struct nvme_lbaf lbaf_at(const struct nvme_id_ns *ns, unsigned int i)
{
	struct nvme_lbaf f;

	memcpy(&f, (const uint8_t *)ns + offsetof(struct nvme_id_ns, lbaf) + i * sizeof(f),
	       sizeof(f));
	return f;
}

static void id_ns_normal(FILE *out, const struct nvme_id_ns *ns, uint32_t nsid)
{
	char buf[JSON_U128_STRLEN];
	unsigned int in_use = ((ns->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1) |
			      (ns->flbas & NVME_NS_FLBAS_LOWER_MASK);

	fprintf(out, "NVME Identify Namespace %d:\n", s32(nsid));
	fprintf(out, "nsze    : %#" PRIx64 "\n", le64toh(ns->nsze));
	fprintf(out, "ncap    : %#" PRIx64 "\n", le64toh(ns->ncap));
	fprintf(out, "nuse    : %#" PRIx64 "\n", le64toh(ns->nuse));
	fprintf(out, "nsfeat  : %#x\n", ns->nsfeat);
	fprintf(out, "nlbaf   : %d\n", ns->nlbaf);
	fprintf(out, "flbas   : %#x\n", ns->flbas);
	fprintf(out, "mc      : %#x\n", ns->mc);
	fprintf(out, "dpc     : %#x\n", ns->dpc);
	fprintf(out, "dps     : %#x\n", ns->dps);
	fprintf(out, "nmic    : %#x\n", ns->nmic);
	fprintf(out, "rescap  : %#x\n", ns->rescap);
	fprintf(out, "fpi     : %#x\n", ns->fpi);
	fprintf(out, "dlfeat  : %d\n", ns->dlfeat);
	fprintf(out, "nawun   : %d\n", le16toh(ns->nawun));
	fprintf(out, "nawupf  : %d\n", le16toh(ns->nawupf));
	fprintf(out, "nacwu   : %d\n", le16toh(ns->nacwu));
	fprintf(out, "nabsn   : %d\n", le16toh(ns->nabsn));
	fprintf(out, "nabo    : %d\n", le16toh(ns->nabo));
	fprintf(out, "nabspf  : %d\n", le16toh(ns->nabspf));
	fprintf(out, "noiob   : %d\n", le16toh(ns->noiob));
	fprintf(out, "nvmcap  : %s\n", u128(ns->nvmcap, buf));
	if (ns->nsfeat & 0x10) {
		fprintf(out, "npwg    : %u\n", le16toh(ns->npwg));
		fprintf(out, "npwa    : %u\n", le16toh(ns->npwa));
		fprintf(out, "npdg    : %u\n", le16toh(ns->npdg));
		fprintf(out, "npda    : %u\n", le16toh(ns->npda));
		fprintf(out, "nows    : %u\n", le16toh(ns->nows));
	}
	fprintf(out, "mssrl   : %u\n", le16toh(ns->mssrl));
	fprintf(out, "mcl     : %u\n", le32toh(ns->mcl));
	fprintf(out, "msrc    : %u\n", ns->msrc);
	fprintf(out, "nulbaf  : %u\n", ns->nulbaf);
	fprintf(out, "anagrpid: %u\n", le32toh(ns->anagrpid));
	fprintf(out, "nsattr\t: %u\n", ns->nsattr);
	fprintf(out, "nvmsetid: %d\n", le16toh(ns->nvmsetid));
	fprintf(out, "endgid  : %d\n", le16toh(ns->endgid));
	fprintf(out, "nguid   : ");
	for (size_t i = 0; i < sizeof(ns->nguid); i++)
		fprintf(out, "%02x", ns->nguid[i]);
	fprintf(out, "\neui64   : ");
	for (size_t i = 0; i < sizeof(ns->eui64); i++)
		fprintf(out, "%02x", ns->eui64[i]);
	fputc('\n', out);
	for (unsigned int i = 0; i <= (unsigned int)ns->nlbaf + ns->nulbaf; i++) {
		struct nvme_lbaf f = lbaf_at(ns, i);

		fprintf(out, "lbaf %2d : ms:%-3d lbads:%-2d rp:%#x %s\n", (int)i,
			le16toh(f.ms), f.ds, f.rp, i == in_use ? "(in use)" : "");
	}
}

static void id_ns_json_members(struct json *j, const struct nvme_id_ns *ns)
{
	char buf[JSON_U128_STRLEN], hex[2 * sizeof(ns->nguid) + 1];

	json_uint(j, "nsze", le64toh(ns->nsze));
	json_uint(j, "ncap", le64toh(ns->ncap));
	json_uint(j, "nuse", le64toh(ns->nuse));
	json_int(j, "nsfeat", ns->nsfeat);
	json_int(j, "nlbaf", ns->nlbaf);
	json_int(j, "flbas", ns->flbas);
	json_int(j, "mc", ns->mc);
	json_int(j, "dpc", ns->dpc);
	json_int(j, "dps", ns->dps);
	json_int(j, "nmic", ns->nmic);
	json_int(j, "rescap", ns->rescap);
	json_int(j, "fpi", ns->fpi);
	json_int(j, "dlfeat", ns->dlfeat);
	json_int(j, "nawun", le16toh(ns->nawun));
	json_int(j, "nawupf", le16toh(ns->nawupf));
	json_int(j, "nacwu", le16toh(ns->nacwu));
	json_int(j, "nabsn", le16toh(ns->nabsn));
	json_int(j, "nabo", le16toh(ns->nabo));
	json_int(j, "nabspf", le16toh(ns->nabspf));
	json_int(j, "noiob", le16toh(ns->noiob));
	json_string(j, "nvmcap", u128(ns->nvmcap, buf));
	json_int(j, "nsattr", ns->nsattr);
	json_int(j, "nvmsetid", le16toh(ns->nvmsetid));
	if (ns->nsfeat & 0x10) {
		json_int(j, "npwg", le16toh(ns->npwg));
		json_int(j, "npwa", le16toh(ns->npwa));
		json_int(j, "npdg", le16toh(ns->npdg));
		json_int(j, "npda", le16toh(ns->npda));
		json_int(j, "nows", le16toh(ns->nows));
	}
	json_int(j, "mssrl", le16toh(ns->mssrl));
	json_int(j, "mcl", s32(le32toh(ns->mcl)));
	json_int(j, "msrc", ns->msrc);
	json_int(j, "nulbaf", ns->nulbaf);
	json_int(j, "anagrpid", s32(le32toh(ns->anagrpid)));
	json_int(j, "endgid", le16toh(ns->endgid));
	hex_str(ns->eui64, sizeof(ns->eui64), hex);
	json_string(j, "eui64", hex);
	hex_str(ns->nguid, sizeof(ns->nguid), hex);
	json_string(j, "nguid", hex);
	json_array_begin(j, "lbafs");
	for (unsigned int i = 0; i <= ns->nlbaf; i++) {
		struct nvme_lbaf f = lbaf_at(ns, i);

		json_object_begin(j, NULL);
		json_int(j, "ms", le16toh(f.ms));
		json_int(j, "ds", f.ds);
		json_int(j, "rp", f.rp);
		json_object_end(j);
	}
	json_array_end(j);
}

void print_id_ns(FILE *out, const struct nvme_id_ns *ns, uint32_t nsid,
		 enum output_format fmt)
{
	struct json j;

	if (fmt != OUTPUT_JSON) {
		id_ns_normal(out, ns, nsid);
		return;
	}
	json_init(&j, out);
	json_object_begin(&j, NULL);
	id_ns_json_members(&j, ns);
	json_object_end(&j);
	fputc('\n', out);
}

/* ------------------------------------------------------------------------ */
/* Namespace Identification Descriptors                                     */
/* ------------------------------------------------------------------------ */

struct ns_desc {
	unsigned int pos;	/* offset in the list: nvme-cli's "loc" */
	uint8_t nidt, nidl;
	const char *type;	/* NULL: a type nvme-cli skips */
	char value[40];	/* a UUID string or 32 hex digits */
};

/*
 * nvme-cli's walk of the list, one descriptor per call: 1 and @d filled,
 * or 0 at the end.  @len carries nvme-cli's step from call to call, because
 * after a CSI descriptor it adds 5 to the previous step instead of setting
 * it (so a CSI descriptor after others makes it skip ahead).
 */
static int ns_desc_next(const uint8_t *list, unsigned int *pos, unsigned int *len,
			struct ns_desc *d)
{
	static const struct {
		const char *type;
		unsigned int size;
	} types[] = {
		[NVME_NIDT_EUI64] = { "eui64", NVME_NIDT_EUI64_LEN },
		[NVME_NIDT_NGUID] = { "nguid", NVME_NIDT_NGUID_LEN },
		[NVME_NIDT_UUID] = { "uuid", NVME_NIDT_UUID_LEN },
		[NVME_NIDT_CSI] = { "csi", NVME_NIDT_CSI_LEN },
	};
	/* The walk can land on odd offsets: read bytes, not the struct. */
	const size_t hdr = sizeof(struct nvme_ns_id_desc);
	const uint8_t *nid;

	if (*pos + hdr > NVME_IDENTIFY_DATA_SIZE)
		return 0;
	d->nidt = list[*pos + offsetof(struct nvme_ns_id_desc, nidt)];
	d->nidl = list[*pos + offsetof(struct nvme_ns_id_desc, nidl)];
	if (!d->nidl)
		return 0;
	nid = list + *pos + hdr;
	d->pos = *pos;
	d->type = NULL;
	if (d->nidt < sizeof(types) / sizeof(types[0]) && types[d->nidt].type) {
		if (*pos + hdr + types[d->nidt].size > NVME_IDENTIFY_DATA_SIZE)
			return 0;
		d->type = types[d->nidt].type;
	}
	switch (d->nidt) {
	case NVME_NIDT_EUI64:
	case NVME_NIDT_NGUID:
		hex_str(nid, types[d->nidt].size, d->value);
		*len = types[d->nidt].size;
		break;
	case NVME_NIDT_UUID:
		uuid_str(nid, d->value);
		*len = NVME_NIDT_UUID_LEN;
		break;
	case NVME_NIDT_CSI:
		snprintf(d->value, sizeof(d->value), "%#x", nid[0]);
		*len += NVME_NIDT_CSI_LEN;
		break;
	default:
		*len = d->nidl;
		break;
	}
	*len += hdr;
	*pos += *len;
	return 1;
}

static void ns_descs_normal(FILE *out, const uint8_t *list, uint32_t nsid)
{
	static const char *const label[] = {
		[NVME_NIDT_EUI64] = "eui64   ",
		[NVME_NIDT_NGUID] = "nguid   ",
		[NVME_NIDT_UUID] = "uuid    ",
		[NVME_NIDT_CSI] = "csi     ",
	};
	unsigned int pos = 0, len = 0;
	struct ns_desc d;

	fprintf(out, "NVME Namespace Identification Descriptors NS %d:\n", s32(nsid));
	while (ns_desc_next(list, &pos, &len, &d)) {
		if (d.type)
			fprintf(out, "%s: %s\n", label[d.nidt], d.value);
	}
}

static void ns_descs_json_array(struct json *j, const uint8_t *list, bool always)
{
	unsigned int pos = 0, len = 0;
	bool open = false;
	struct ns_desc d;

	while (ns_desc_next(list, &pos, &len, &d)) {
		if (!d.type)
			continue;
		if (!open) {
			json_array_begin(j, "ns-descs");
			open = true;
		}
		json_object_begin(j, NULL);
		json_int(j, "loc", d.pos);
		json_int(j, "nidt", d.nidt);
		json_int(j, "nidl", d.nidl);
		json_string(j, "type", d.type);
		json_string(j, d.type, d.value);
		json_object_end(j);
	}
	/* nvme-cli leaves the member out when there is no descriptor. */
	if (!open && always)
		json_array_begin(j, "ns-descs");
	if (open || always)
		json_array_end(j);
}

void print_ns_descs(FILE *out, const void *descs, uint32_t nsid,
		    enum output_format fmt)
{
	struct json j;

	if (fmt != OUTPUT_JSON) {
		ns_descs_normal(out, descs, nsid);
		return;
	}
	json_init(&j, out);
	json_object_begin(&j, NULL);
	ns_descs_json_array(&j, descs, false);
	json_object_end(&j);
	fputc('\n', out);
}

void print_id_ns_with_descs_json(FILE *out, const struct nvme_id_ns *ns,
				 const void *descs)
{
	struct json j;

	json_init(&j, out);
	json_object_begin(&j, NULL);
	id_ns_json_members(&j, ns);
	if (descs)
		ns_descs_json_array(&j, descs, true);
	json_object_end(&j);
	fputc('\n', out);
}

/* ------------------------------------------------------------------------ */
/* Active namespace list                                                    */
/* ------------------------------------------------------------------------ */

void print_ns_list(FILE *out, const uint32_t *list, enum output_format fmt)
{
	struct json j;

	if (fmt != OUTPUT_JSON) {
		for (unsigned int i = 0; i < NVME_ID_NS_LIST_MAX; i++) {
			if (list[i])
				fprintf(out, "[%4u]:%#x\n", i, list[i]);
		}
		return;
	}
	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "nsid_list");
	for (unsigned int i = 0; i < NVME_ID_NS_LIST_MAX; i++) {
		if (!list[i])
			continue;
		json_object_begin(&j, NULL);
		json_int(&j, "nsid", s32(list[i]));
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	fputc('\n', out);
}
