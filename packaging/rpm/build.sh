#!/usr/bin/env bash
# Smoke-builds the RPM: a tarball of this tree (tracked and new, not ignored files) as
# SOURCES/laas-VERSION.tar.gz, then rpmbuild -bb packaging/rpm/laas.spec in a private _topdir.
# On a non-RPM machine (Debian with the rpm package) the BuildRequires cannot be checked by
# rpm's database, so pass --nodeps there: LAAS_RPM_NODEPS=1 (the default when /etc/debian_version
# exists). Extra arguments go to rpmbuild. Prints the RPM paths, then rpmlint's findings.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
top=${LAAS_RPM_TOPDIR:-/tmp/laas-rpmbuild}
version=$(sed -n 's/^Version:[[:space:]]*//p' "$src/packaging/rpm/laas.spec")
rm -rf "$top"
mkdir -p "$top"/{SOURCES,SPECS,BUILD,RPMS,SRPMS}
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  tar --null --ignore-failed-read -T - --transform "s,^,laas-$version/," -czf \
    "$top/SOURCES/laas-$version.tar.gz" 2>/dev/null)
nodeps=()
if [ "${LAAS_RPM_NODEPS:-$([ -f /etc/debian_version ] && echo 1)}" = 1 ]; then nodeps=(--nodeps); fi
rpmbuild -bb "${nodeps[@]}" --define "_topdir $top" "$@" "$src/packaging/rpm/laas.spec"
find "$top/RPMS" -name '*.rpm'
if command -v rpmlint >/dev/null; then
  echo "---- rpmlint (intended findings filtered by packaging/rpm/laas.rpmlintrc) ----"
  rpmlint -r "$src/packaging/rpm/laas.rpmlintrc" "$top"/RPMS/*/*.rpm "$src/packaging/rpm/laas.spec" || true
fi
