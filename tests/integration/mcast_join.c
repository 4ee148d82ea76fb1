/* laas-mcast-join: joins (or leaves) a multicast group through the SA from the local port, as
 * an IPoIB driver would: an MCMemberRecord SubnAdmSet (SubnAdmDelete for --leave) carrying the
 * group's MGID, this port's GID and the creation parameters OpenSM requires. Integration tests
 * run it as each host of a simulated fabric (SIM_HOST=<host> LD_PRELOAD=libumad2sim.so).
 *
 *   laas-mcast-join [--leave] [--pkey 0xffff] [--qkey 0x0b1b] MGID
 *
 * Prints "mlid 0xC001" on success; exit 0 joined, 1 the SA refused or did not answer, 2 usage.
 */
#include <arpa/inet.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MCMemberRecord component mask bits (IBA 1.3, 15.2.5.17). */
enum {
  CM_MGID = 1 << 0,
  CM_PORT_GID = 1 << 1,
  CM_QKEY = 1 << 2,
  CM_TCLASS = 1 << 6,
  CM_PKEY = 1 << 7,
  CM_SL = 1 << 12,
  CM_FLOW_LABEL = 1 << 13,
  CM_JOIN_STATE = 1 << 16,
};

static int usage(void) {
  fprintf(stderr, "usage: laas-mcast-join [--leave] [--pkey P] [--qkey Q] MGID\n");
  return 2;
}

int main(int argc, char** argv) {
  int leave = 0;
  unsigned pkey = 0xffff, qkey = 0x0b1b;
  const char* mgid_text = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--leave")) {
      leave = 1;
    } else if (!strcmp(argv[i], "--pkey") && i + 1 < argc) {
      pkey = (unsigned)strtoul(argv[++i], NULL, 0);
    } else if (!strcmp(argv[i], "--qkey") && i + 1 < argc) {
      qkey = (unsigned)strtoul(argv[++i], NULL, 0);
    } else if (argv[i][0] == '-' || mgid_text) {
      return usage();
    } else {
      mgid_text = argv[i];
    }
  }
  if (!mgid_text) return usage();
  uint8_t mgid[16];
  if (inet_pton(AF_INET6, mgid_text, mgid) != 1 || mgid[0] != 0xff) {
    fprintf(stderr, "laas-mcast-join: '%s' is not a multicast GID (ff..:...)\n", mgid_text);
    return 2;
  }

  umad_port_t port;
  if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
    fprintf(stderr, "laas-mcast-join: no local InfiniBand port\n");
    return 1;
  }
  uint8_t port_gid[16];
  memcpy(port_gid, &port.gid_prefix, 8);
  memcpy(port_gid + 8, &port.port_guid, 8);
  const int sm_lid = (int)port.sm_lid;
  umad_release_port(&port);

  int classes[] = {IB_SA_CLASS};
  struct ibmad_port* src = mad_rpc_open_port(NULL, 0, classes, 1);
  if (!src) {
    fprintf(stderr, "laas-mcast-join: cannot open the port for SA MADs\n");
    return 1;
  }
  ib_portid_t sm = {0};
  sm.lid = sm_lid;
  if (sm.lid == 0 && ib_resolve_smlid_via(&sm, 2000, src) < 0) {
    fprintf(stderr, "laas-mcast-join: no SM LID\n");
    mad_rpc_close_port(src);
    return 1;
  }

  uint8_t data[IB_SA_DATA_SIZE];
  memset(data, 0, sizeof data);
  mad_set_array(data, 0, IB_SA_MCM_MGID_F, mgid);
  mad_set_array(data, 0, IB_SA_MCM_PORTGID_F, port_gid);
  mad_set_field(data, 0, IB_SA_MCM_QKEY_F, qkey);
  mad_set_field(data, 0, IB_SA_MCM_PKEY_F, pkey);
  mad_set_field(data, 0, IB_SA_MCM_TCLASS_F, 0);
  mad_set_field(data, 0, IB_SA_MCM_SL_F, 0);
  mad_set_field(data, 0, IB_SA_MCM_FLOW_LABEL_F, 0);
  mad_set_field(data, 0, IB_SA_MCM_JOIN_STATE_F, 1); /* full member */

  ib_sa_call_t sa;
  memset(&sa, 0, sizeof sa);
  sa.attrid = IB_SA_ATTR_MCRECORD;
  sa.method = leave ? IB_MAD_METHOD_DELETE : IB_MAD_METHOD_SET;
  sa.mask =
      CM_MGID | CM_PORT_GID | CM_QKEY | CM_TCLASS | CM_PKEY | CM_SL | CM_FLOW_LABEL | CM_JOIN_STATE;
  sa.trid = mad_trid();
  /* libibmad prints the MAD status when the SA answers with an error. */
  uint8_t* reply = sa_rpc_call(src, data, &sm, &sa, 2000);
  mad_rpc_close_port(src);
  if (!reply) {
    fprintf(stderr, "laas-mcast-join: the SA (LID %d) refused or did not answer\n", sm.lid);
    return 1;
  }
  printf("mlid 0x%04X\n", (unsigned)mad_get_field(data, 0, IB_SA_MCM_MLID_F));
  return 0;
}
