import { Migration20261121050755 } from './Migration20261121050755.ts';
import { Migration20261121053711 } from './Migration20261121053711.ts';
import { Migration20261121074213 } from './Migration20261121074213.ts';
import { Migration20261121081401 } from './Migration20261121081401.ts';
import { Migration20261124025102 } from './Migration20261124025102.ts';
import { Migration20261124030000 } from './Migration20261124030000.ts';
import { Migration20261124030100 } from './Migration20261124030100.ts';
import { Migration20261125030000 } from './Migration20261125030000.ts';
import { Migration20261125040000 } from './Migration20261125040000.ts';
import { Migration20261125041000 } from './Migration20261125041000.ts';
import { Migration20261126040000 } from './Migration20261126040000.ts';
import { Migration20261127000000 } from './Migration20261127000000.ts';
import { Migration20261127230000 } from './Migration20261127230000.ts';
import { Migration20261127234147 } from './Migration20261127234147.ts';
import { Migration20261127235500 } from './Migration20261127235500.ts';
import { Migration20261128004000 } from './Migration20261128004000.ts';
import { Migration20261128010000 } from './Migration20261128010000.ts';
import { Migration20261128020000 } from './Migration20261128020000.ts';
import { Migration20261128100000 } from './Migration20261128100000.ts';
import { Migration20261128013000 } from './Migration20261128013000.ts';
import { Migration20261128110000 } from './Migration20261128110000.ts';
import { Migration20261128120000 } from './Migration20261128120000.ts';

/** Every migration, in order. New ones come from `npm run db:migration -w @mint/db` and are listed here. */
export const migrations = [{ name: 'Migration20261121050755', class: Migration20261121050755 },
  { name: 'Migration20261121053711', class: Migration20261121053711 },
  { name: 'Migration20261121074213', class: Migration20261121074213 },
  { name: 'Migration20261121081401', class: Migration20261121081401 },
  { name: 'Migration20261124025102', class: Migration20261124025102 },
  { name: 'Migration20261124030000', class: Migration20261124030000 },
  { name: 'Migration20261124030100', class: Migration20261124030100 },
  { name: 'Migration20261125030000', class: Migration20261125030000 },
  { name: 'Migration20261125040000', class: Migration20261125040000 },
  { name: 'Migration20261125041000', class: Migration20261125041000 },
  { name: 'Migration20261126040000', class: Migration20261126040000 },
  { name: 'Migration20261127000000', class: Migration20261127000000 },
  { name: 'Migration20261127230000', class: Migration20261127230000 },
  { name: 'Migration20261127234147', class: Migration20261127234147 },
  { name: 'Migration20261127235500', class: Migration20261127235500 },
  { name: 'Migration20261128004000', class: Migration20261128004000 },
  { name: 'Migration20261128010000', class: Migration20261128010000 },
  { name: 'Migration20261128013000', class: Migration20261128013000 },
  { name: 'Migration20261128020000', class: Migration20261128020000 },
  { name: 'Migration20261128100000', class: Migration20261128100000 },
  { name: 'Migration20261128110000', class: Migration20261128110000 },
  { name: 'Migration20261128120000', class: Migration20261128120000 },
];
