import type pg from 'pg';

/**
 * Makes the store refuse, at write time, every page whose URL contains `urlPart`, as a real storage failure
 * (a full disk, a lost connection) would: a trigger on documents raises `message`. Returns its removal.
 * A test database's own trigger, so the code under test runs unchanged.
 */
export async function refusePagesLike(pool: pg.Pool, urlPart: string, message: string): Promise<() => Promise<void>> {
  const name = `refuse_${urlPart.replace(/\W/g, '_')}`;
  await pool.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF strpos(NEW.url, ${literal(urlPart)}) > 0 THEN RAISE EXCEPTION '%', ${literal(message)}; END IF; RETURN NEW; END $$`);
  await pool.query(`CREATE TRIGGER ${name} BEFORE INSERT ON documents FOR EACH ROW EXECUTE FUNCTION ${name}()`);
  return async () => {
    await pool.query(`DROP TRIGGER ${name} ON documents`);
    await pool.query(`DROP FUNCTION ${name}()`);
  };
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
