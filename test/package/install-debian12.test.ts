// test: alone (mmdebstrap root, package install)
// The amd64 package installed for real on a clean Debian 12 (bookworm) root: test/package/helpers/install.ts.
import { installTests } from './helpers/install.ts';

installTests('bookworm', 'Debian 12', 230);
