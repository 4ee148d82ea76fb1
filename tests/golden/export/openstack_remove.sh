#!/bin/bash
set -euo pipefail
# Remove departing LaaS tenants' host aggregates.

# tenant 1
openstack aggregate remove host laas-1 comp-11
openstack aggregate remove host laas-1 comp-12
openstack aggregate remove host laas-1 comp-13
openstack aggregate remove host laas-1 comp-14
openstack aggregate remove host laas-1 comp-15
openstack aggregate remove host laas-1 comp-16
openstack aggregate remove host laas-1 comp-17
openstack aggregate remove host laas-1 comp-18
openstack aggregate remove host laas-1 comp-19
openstack aggregate remove host laas-1 comp-20
openstack aggregate delete laas-1
