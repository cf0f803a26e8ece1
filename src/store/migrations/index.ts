// Every migration, in order. `npm start` applies the pending ones.
import { Migration20261122134810 } from './Migration20261122134810.ts';
import { Migration20261122141253 } from './Migration20261122141253.ts';
import { Migration20261122141631 } from './Migration20261122141631.ts';
import { Migration20261122142143 } from './Migration20261122142143.ts';
import { Migration20261122143817 } from './Migration20261122143817.ts';
import { Migration20261123100000 } from './Migration20261123100000.ts';
import { Migration20261123200000 } from './Migration20261123200000.ts';
import { Migration20261123300000 } from './Migration20261123300000.ts';
import { Migration20261123400000 } from './Migration20261123400000.ts';
import { Migration20261123500000 } from './Migration20261123500000.ts';
import { Migration20261123600000 } from './Migration20261123600000.ts';
import { Migration20261124100000 } from './Migration20261124100000.ts';
import { Migration20261124190200 } from './Migration20261124190200.ts';
import { Migration20261125190000 } from './Migration20261125190000.ts';
import { Migration20261126200000 } from './Migration20261126200000.ts';
import { Migration20261127100000 } from './Migration20261127100000.ts';
import { Migration20261128100000 } from './Migration20261128100000.ts';
import { Migration20261129100000 } from './Migration20261129100000.ts';
import { Migration20261129110000 } from './Migration20261129110000.ts';
import { Migration20261130100000 } from './Migration20261130100000.ts';
import { Migration20261130110000 } from './Migration20261130110000.ts';
import { Migration20261201100000 } from './Migration20261201100000.ts';

export const migrationsList = [
  { name: 'Migration20261122134810', class: Migration20261122134810 },
  { name: 'Migration20261122141253', class: Migration20261122141253 },
  { name: 'Migration20261122141631', class: Migration20261122141631 },
  { name: 'Migration20261122142143', class: Migration20261122142143 },
  { name: 'Migration20261122143817', class: Migration20261122143817 },
  { name: 'Migration20261123100000', class: Migration20261123100000 },
  { name: 'Migration20261123200000', class: Migration20261123200000 },
  { name: 'Migration20261123300000', class: Migration20261123300000 },
  { name: 'Migration20261123400000', class: Migration20261123400000 },
  { name: 'Migration20261123500000', class: Migration20261123500000 },
  { name: 'Migration20261123600000', class: Migration20261123600000 },
  { name: 'Migration20261124100000', class: Migration20261124100000 },
  { name: 'Migration20261124190200', class: Migration20261124190200 },
  { name: 'Migration20261125190000', class: Migration20261125190000 },
  { name: 'Migration20261126200000', class: Migration20261126200000 },
  { name: 'Migration20261127100000', class: Migration20261127100000 },
  { name: 'Migration20261128100000', class: Migration20261128100000 },
  { name: 'Migration20261129100000', class: Migration20261129100000 },
  { name: 'Migration20261129110000', class: Migration20261129110000 },
  { name: 'Migration20261130100000', class: Migration20261130100000 },
  { name: 'Migration20261130110000', class: Migration20261130110000 },
  { name: 'Migration20261201100000', class: Migration20261201100000 },
];
