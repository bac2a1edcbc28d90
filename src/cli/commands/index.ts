import type { CliCommand } from '../command';
import { pendingApprove, pendingCancel, pendingDecline, pendingEdit, pendingSign } from './pending-answers';
import { pendingHistory } from './pending-history';
import { pendingList } from './pending-list';
import { pendingShow } from './pending-show';
import { serve } from './serve';
import { grantsList, grantsRevoke } from './grants';
import { prune } from './prune';
import { runsCancel } from './runs-cancel';
import { decisionsExport, decisionsReport } from './decisions';

/** Every command the CLI knows, in the order `--help` lists them. A new command is a file and a line here. */
export const COMMANDS: readonly CliCommand[] = [
  pendingList,
  pendingShow,
  pendingApprove,
  pendingSign,
  pendingEdit,
  pendingDecline,
  pendingCancel,
  pendingHistory,
  grantsList,
  grantsRevoke,
  runsCancel,
  decisionsExport,
  decisionsReport,
  prune,
  serve,
];
