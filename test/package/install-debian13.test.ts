// test: shares package (mmdebstrap root, package install; the package tests share one build cache: one at a time, beside other files)
// The amd64 package installed for real on a clean Debian 13 (trixie) root: test/package/helpers/install.ts.
import { installTests } from './helpers/install.ts';

installTests('trixie', 'Debian 13', 232);
