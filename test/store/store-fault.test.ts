import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreFaultError } from '../../src/errors.js';
import { asStoreFault, storeFaultCondition } from '../../src/store/store-fault.js';

function coded(code: string, message = 'driver error'): Error {
  return Object.assign(new Error(message), { code });
}

describe('store faults', () => {
  it.each([
    ['SQLITE_FULL', 'disk_full', 30],
    ['SQLITE_IOERR_WRITE', 'io_error', 10],
    ['SQLITE_READONLY_DBMOVED', 'read_only', 30],
    ['SQLITE_BUSY', 'busy', 1],
    ['SQLITE_BUSY_SNAPSHOT', 'busy', 1],
    ['57P01', 'unreachable', 5],
    ['57P03', 'unreachable', 5],
    ['08006', 'unreachable', 5],
    ['57014', 'timeout', 5],
    ['55P03', 'timeout', 5],
    ['53100', 'disk_full', 30],
    ['53300', 'busy', 1],
    ['25006', 'read_only', 30],
    ['ECONNREFUSED', 'unreachable', 5],
    ['EPIPE', 'unreachable', 5],
    ['ENOSPC', 'disk_full', 30],
    ['EROFS', 'read_only', 30],
  ] as const)('names the driver code %s as %s, retry after %i s', (code, condition, seconds) => {
    const cause = coded(code);
    const fault = asStoreFault(cause);
    expect(fault).toBeInstanceOf(StoreFaultError);
    expect(fault).toMatchObject({ condition, retryAfterSeconds: seconds, cause });
    expect((fault as StoreFaultError).message).toContain(code);
  });

  it.each([
    ['Connection terminated unexpectedly', 'unreachable'],
    ['Connection terminated due to connection timeout', 'timeout'],
    ['timeout exceeded when trying to connect', 'timeout'],
    ['Query read timeout', 'timeout'],
    ['Client has encountered a connection error and is not queryable', 'unreachable'],
  ] as const)('names node-postgres’s "%s" as %s', (message, condition) => {
    expect(storeFaultCondition(new Error(message))).toBe(condition);
  });

  it('looks inside an AggregateError of refused addresses', () => {
    const refused = new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], '');
    expect(storeFaultCondition(refused)).toBe('unreachable');
  });

  it.each([
    ['a unique violation', coded('23505')],
    ['a syntax error', coded('42601')],
    ['SQLite corruption', coded('SQLITE_CORRUPT')],
    ['SQLite constraint', coded('SQLITE_CONSTRAINT_PRIMARYKEY')],
    ['a bug', new TypeError('x is undefined')],
  ])('leaves %s as it is: a bug or a refusal, not an outage', (_name, error) => {
    expect(asStoreFault(error)).toBe(error);
  });

  it('never wraps what it does not recognise, and keeps a fault a fault', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (code, message) => {
        const error = coded(code, message);
        const result = asStoreFault(error);
        if (storeFaultCondition(error) === undefined) expect(result).toBe(error);
        else {
          expect(result).toBeInstanceOf(StoreFaultError);
          expect(asStoreFault(result)).toBe(result);
        }
      }),
    );
  });
});
