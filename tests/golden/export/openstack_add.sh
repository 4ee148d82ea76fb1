#!/bin/bash
set -euo pipefail
# Host aggregates for LaaS tenants, generated. Needs the
# AggregateMultiTenancyIsolation scheduler filter.

# tenant 4
openstack aggregate create laas-4
openstack aggregate set --property filter_tenant_id=8c1f0a4e6b2d4f39a1c3e5d7f9b0a2c4 laas-4
openstack aggregate add host laas-4 comp-1
openstack aggregate add host laas-4 comp-2
openstack aggregate add host laas-4 comp-3
openstack aggregate add host laas-4 comp-4
openstack aggregate add host laas-4 comp-5
openstack aggregate add host laas-4 comp-6
openstack aggregate add host laas-4 comp-7
openstack aggregate add host laas-4 comp-8
openstack aggregate add host laas-4 comp-9
openstack aggregate add host laas-4 comp-10

# tenant 1
openstack aggregate create laas-1
openstack aggregate set --property filter_tenant_id=1 laas-1
openstack aggregate add host laas-1 comp-11
openstack aggregate add host laas-1 comp-12
openstack aggregate add host laas-1 comp-13
openstack aggregate add host laas-1 comp-14
openstack aggregate add host laas-1 comp-15
openstack aggregate add host laas-1 comp-16
openstack aggregate add host laas-1 comp-17
openstack aggregate add host laas-1 comp-18
openstack aggregate add host laas-1 comp-19
openstack aggregate add host laas-1 comp-20
