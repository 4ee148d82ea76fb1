/* laas-lft-set: changes one entry of a switch's linear forwarding table with a directed-route
 * SubnSet(LinearForwardingTable), behind the subnet manager's back -- what anyone who may send
 * SMPs to a switch without an M_Key can do. Integration tests use it to tamper with a table
 * that OpenSM believes it set (SIM_HOST=<node> LD_PRELOAD=libumad2sim.so under ibsim).
 *
 *   laas-lft-set SWITCH LID PORT      e.g. laas-lft-set 0,1 0x0020 1
 *
 * SWITCH is a directed route (with a comma, or "0") or the switch's LID.
 *
 * Reads the 64-entry block holding LID, sets the entry to PORT, writes the block back, reads
 * it again and prints "LID -> PORT (was OLD)". Exit 0 done, 1 the switch did not take it, 2 usage.
 */
#include <infiniband/mad.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: laas-lft-set SWITCH LID PORT\n");
    return 2;
  }
  char* end = NULL;
  const long lid = strtol(argv[2], &end, 0);
  if (*end || lid < 1 || lid > 0xBFFF) {
    fprintf(stderr, "laas-lft-set: bad LID '%s'\n", argv[2]);
    return 2;
  }
  const long port = strtol(argv[3], &end, 0);
  if (*end || port < 0 || port > 255) {
    fprintf(stderr, "laas-lft-set: bad port '%s'\n", argv[3]);
    return 2;
  }
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  struct ibmad_port* srcport = mad_rpc_open_port(NULL, 0, classes, 2);
  if (!srcport) {
    fprintf(stderr, "laas-lft-set: cannot open the local port\n");
    return 1;
  }
  ib_portid_t id;
  memset(&id, 0, sizeof id);
  const int by_route = strchr(argv[1], ',') || !strcmp(argv[1], "0");
  if (ib_resolve_portid_str_via(&id, argv[1], by_route ? IB_DEST_DRPATH : IB_DEST_LID, NULL,
                                srcport) < 0) {
    fprintf(stderr, "laas-lft-set: bad switch '%s'\n", argv[1]);
    return 2;
  }
  uint8_t block[IB_SMP_DATA_SIZE];
  const unsigned blockno = (unsigned)lid / 64;
  if (!smp_query_via(block, &id, IB_ATTR_LINEARFORWTBL, blockno, 0, srcport)) {
    fprintf(stderr, "laas-lft-set: cannot read LFT block %u at %s\n", blockno, argv[1]);
    return 1;
  }
  const unsigned old = block[lid % 64];
  block[lid % 64] = (uint8_t)port;
  if (!smp_set_via(block, &id, IB_ATTR_LINEARFORWTBL, blockno, 0, srcport)) {
    fprintf(stderr, "laas-lft-set: the switch at %s refused the Set\n", argv[1]);
    return 1;
  }
  memset(block, 0, sizeof block);
  if (!smp_query_via(block, &id, IB_ATTR_LINEARFORWTBL, blockno, 0, srcport) ||
      block[lid % 64] != (uint8_t)port) {
    fprintf(stderr, "laas-lft-set: the switch at %s did not keep the entry\n", argv[1]);
    return 1;
  }
  printf("0x%04lx -> %ld (was %u)\n", lid, port, old);
  mad_rpc_close_port(srcport);
  return 0;
}
