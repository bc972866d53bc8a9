// test: alone (mmdebstrap root, package install)
// The amd64 package installed for real on a clean Debian 13 (trixie) root: test/package/helpers/install.ts.
import { installTests } from './helpers/install.ts';

installTests('trixie', 'Debian 13', 232);
