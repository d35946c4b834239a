"""SQL query forms beyond a single SELECT: WITH, UNION ALL, DISTINCT, IN/EXISTS subqueries,
views, VALUES, LIMIT and ORDER BY ... LIMIT in streaming mode.

Queries over one source whose changelog order is defined are printed with
``execute().print()`` (parallelism 1). A UNION ALL and the subqueries (semi- and anti-joins
of two inputs) produce rows in an order that depends on how their inputs interleave, and an
anti-join may retract a row it emitted; for those the program applies the collected changelog
and prints the final rows sorted.
"""

from collections import Counter

from pyflink.table import EnvironmentSettings, TableEnvironment

EMPLOYEES = [(1, "ann", "eng", 120), (2, "bo", "ops", 80), (3, "cy", "eng", 95),
             (4, "di", "hr", 70), (5, "ed", "ops", 88), (6, "flo", "eng", 101)]
DEPARTMENTS = [("eng", "Berlin"), ("ops", "Lisbon"), ("sales", "Oslo")]


def final_rows(t_env, sql):
    counts = Counter()
    for row in t_env.execute_sql(sql).collect():
        counts[tuple(row)] += 1 if str(row.get_row_kind()) in ("+I", "+U") else -1
    return sorted((values for values, n in counts.items() for _ in range(n)), key=repr)


def show(title, rows):
    print(title)
    for row in rows:
        print(" ", row)


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view(
        "employees", t_env.from_elements(EMPLOYEES, ["id", "name", "dept", "salary"]))
    t_env.create_temporary_view(
        "departments", t_env.from_elements(DEPARTMENTS, ["dept", "city"]))

    t_env.execute_sql("""
        WITH paid AS (SELECT dept, salary FROM employees WHERE salary > 85)
        SELECT dept, COUNT(*) AS n, MAX(salary) AS top FROM paid GROUP BY dept""").print()
    t_env.execute_sql("SELECT DISTINCT dept FROM employees").print()
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW seniors AS SELECT name, salary FROM employees WHERE salary >= 95")
    t_env.execute_sql("SELECT UPPER(name) AS name, salary FROM seniors").print()
    t_env.execute_sql(
        "SELECT * FROM (VALUES (1, 'one'), (2, 'two'), (3, 'six')) AS t(n, word)").print()
    t_env.execute_sql("SELECT name FROM employees LIMIT 2").print()
    t_env.execute_sql(
        "SELECT name, salary FROM employees ORDER BY salary DESC LIMIT 3").print()

    show("union all:", final_rows(t_env, """
        SELECT name, 'high' AS tier FROM employees WHERE salary >= 100
        UNION ALL
        SELECT name, 'low' AS tier FROM employees WHERE salary < 80"""))
    show("in subquery:", final_rows(t_env, """
        SELECT name FROM employees
        WHERE dept IN (SELECT dept FROM departments WHERE city <> 'Oslo')"""))
    show("exists:", final_rows(t_env, """
        SELECT d.dept, d.city FROM departments d
        WHERE EXISTS (SELECT 1 FROM employees e WHERE e.dept = d.dept AND e.salary > 90)"""))
    show("not in:", final_rows(t_env, """
        SELECT name, dept FROM employees
        WHERE dept NOT IN (SELECT dept FROM departments)"""))


if __name__ == "__main__":
    main()
