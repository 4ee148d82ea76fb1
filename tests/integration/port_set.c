/* laas-port-set: reads or changes a port table behind the subnet manager's back with SMP
 * Gets and Sets -- what anyone who may send SMPs to a port without an M_Key can do.
 * Integration tests use it to tamper with tables that OpenSM believes it set, and to read
 * them back (SIM_HOST=<node> LD_PRELOAD=libumad2sim.so under ibsim).
 *
 *   laas-port-set smlid TARGET PORT [LID]      a port's master SM LID (print, or set to LID)
 *   laas-port-set pkey TARGET BLOCK [IDX VAL]  a P_Key block (print, or set entry IDX to VAL)
 *   laas-port-set sl2vl TARGET IN OUT [VL]     a switch's SL2VL table from IN to OUT (print 16
 *                                              VLs, or set every SL to VL)
 *   laas-port-set drops TARGET PORTS           print "IN OUT" of every pair (1..PORTS) whose
 *                                              SL2VL table sends every SL to VL15 (a drop)
 *
 * TARGET is a LID or a directed route (with a comma, or "0"). A Set is read back: exit 0 done,
 * 1 the port refused or did not keep it (or cannot be reached), 2 usage.
 */
#include <infiniband/mad.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ibmad_port* srcport;
static ib_portid_t target;

static long number(const char* text, long max, const char* what) {
  char* end = NULL;
  const long v = strtol(text, &end, 0);
  if (!*text || *end || v < 0 || v > max) {
    fprintf(stderr, "laas-port-set: bad %s '%s'\n", what, text);
    exit(2);
  }
  return v;
}

static void query(uint8_t* buf, unsigned attr, unsigned mod) {
  memset(buf, 0, IB_SMP_DATA_SIZE);
  if (!smp_query_via(buf, &target, attr, mod, 0, srcport)) {
    fprintf(stderr, "laas-port-set: Get(0x%x, 0x%x) unanswered\n", attr, mod);
    exit(1);
  }
}

static void set(uint8_t* buf, unsigned attr, unsigned mod) {
  if (!smp_set_via(buf, &target, attr, mod, 0, srcport)) {
    fprintf(stderr, "laas-port-set: Set(0x%x, 0x%x) refused\n", attr, mod);
    exit(1);
  }
}

static unsigned vl_of(const uint8_t* t, int sl) { return (t[sl / 2] >> (sl % 2 ? 0 : 4)) & 0xf; }

static int smlid(int argc, char** argv) {
  const unsigned port = (unsigned)number(argv[3], 254, "port");
  uint8_t buf[IB_SMP_DATA_SIZE];
  query(buf, IB_ATTR_PORT_INFO, port);
  if (argc == 4) {
    printf("%u\n", mad_get_field(buf, 0, IB_PORT_SMLID_F));
    return 0;
  }
  const unsigned lid = (unsigned)number(argv[4], 0xBFFF, "LID");
  mad_set_field(buf, 0, IB_PORT_SMLID_F, lid);
  mad_set_field(buf, 0, IB_PORT_STATE_F, 0); /* no state change */
  mad_set_field(buf, 0, IB_PORT_PHYS_STATE_F, 0);
  set(buf, IB_ATTR_PORT_INFO, port);
  query(buf, IB_ATTR_PORT_INFO, port);
  if (mad_get_field(buf, 0, IB_PORT_SMLID_F) != lid) return fprintf(stderr, "not kept\n"), 1;
  printf("master SM LID %u\n", lid);
  return 0;
}

static int pkey(int argc, char** argv) {
  const unsigned block = (unsigned)number(argv[3], 2047, "block");
  uint8_t buf[IB_SMP_DATA_SIZE];
  query(buf, IB_ATTR_PKEY_TBL, block);
  if (argc == 4) {
    for (int i = 0; i < 32; ++i) printf("%s0x%04x", i ? " " : "", buf[2 * i] << 8 | buf[2 * i + 1]);
    printf("\n");
    return 0;
  }
  if (argc != 6) return fprintf(stderr, "usage: laas-port-set pkey TARGET BLOCK [IDX VAL]\n"), 2;
  const int idx = (int)number(argv[4], 31, "index");
  const unsigned val = (unsigned)number(argv[5], 0xFFFF, "P_Key");
  buf[2 * idx] = (uint8_t)(val >> 8);
  buf[2 * idx + 1] = (uint8_t)val;
  set(buf, IB_ATTR_PKEY_TBL, block);
  query(buf, IB_ATTR_PKEY_TBL, block);
  if ((unsigned)(buf[2 * idx] << 8 | buf[2 * idx + 1]) != val)
    return fprintf(stderr, "not kept\n"), 1;
  printf("P_Key block %u entry %d = 0x%04x\n", block, idx, val);
  return 0;
}

static int sl2vl(int argc, char** argv) {
  const unsigned in = (unsigned)number(argv[3], 254, "in port");
  const unsigned out = (unsigned)number(argv[4], 254, "out port");
  const unsigned mod = in << 8 | out;
  uint8_t buf[IB_SMP_DATA_SIZE];
  query(buf, IB_ATTR_SLVL_TABLE, mod);
  if (argc == 5) {
    for (int sl = 0; sl < 16; ++sl) printf("%s%u", sl ? " " : "", vl_of(buf, sl));
    printf("\n");
    return 0;
  }
  const unsigned vl = (unsigned)number(argv[5], 15, "VL");
  for (int i = 0; i < 8; ++i) buf[i] = (uint8_t)(vl << 4 | vl);
  set(buf, IB_ATTR_SLVL_TABLE, mod);
  query(buf, IB_ATTR_SLVL_TABLE, mod);
  for (int sl = 0; sl < 16; ++sl)
    if (vl_of(buf, sl) != vl) return fprintf(stderr, "not kept\n"), 1;
  printf("SL2VL %u -> %u: every SL on VL %u\n", in, out, vl);
  return 0;
}

static int drops(char** argv) {
  const unsigned ports = (unsigned)number(argv[3], 254, "port count");
  uint8_t buf[IB_SMP_DATA_SIZE];
  for (unsigned in = 1; in <= ports; ++in)
    for (unsigned out = 1; out <= ports; ++out) {
      if (in == out) continue;
      query(buf, IB_ATTR_SLVL_TABLE, in << 8 | out);
      int all = 1;
      for (int sl = 0; sl < 16; ++sl) all = all && vl_of(buf, sl) == 15;
      if (all) printf("%u %u\n", in, out);
    }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: laas-port-set smlid|pkey|sl2vl|drops TARGET ...\n");
    return 2;
  }
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  srcport = mad_rpc_open_port(NULL, 0, classes, 2);
  if (!srcport) {
    fprintf(stderr, "laas-port-set: cannot open the local port\n");
    return 1;
  }
  const int by_route = strchr(argv[2], ',') || !strcmp(argv[2], "0");
  if (ib_resolve_portid_str_via(&target, argv[2], by_route ? IB_DEST_DRPATH : IB_DEST_LID, NULL,
                                srcport) < 0) {
    fprintf(stderr, "laas-port-set: bad target '%s'\n", argv[2]);
    return 2;
  }
  int rc = 2;
  if (!strcmp(argv[1], "smlid") && (argc == 4 || argc == 5))
    rc = smlid(argc, argv);
  else if (!strcmp(argv[1], "pkey") && argc >= 4)
    rc = pkey(argc, argv);
  else if (!strcmp(argv[1], "sl2vl") && (argc == 5 || argc == 6))
    rc = sl2vl(argc, argv);
  else if (!strcmp(argv[1], "drops") && argc == 4)
    rc = drops(argv);
  else
    fprintf(stderr, "laas-port-set: unknown or incomplete command '%s'\n", argv[1]);
  mad_rpc_close_port(srcport);
  return rc;
}
