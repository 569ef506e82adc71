/**
 * Evaluates a ManifestWork condition rule the way the OCM work agent does (open-cluster-management-io/ocm
 * pkg/work/spoke/conditions/reader.go), with an ECMAScript CEL evaluator (@bufbuild/cel, a port of cel-go) and the
 * string extension functions the agent's environment has (cel-go ext.Strings): the `celExpressions` are ANDed into
 * the condition status; the `messageExpression` (variables `object` and `result`) builds the message. An expression
 * that fails makes the condition's message the error text, as the agent does.
 */
import { isCelError, run, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { ConditionRule } from '../../src/model/reconcile/resource-summary.js';

/** What the agent writes for one rule. */
export interface RuleResult {
  readonly status: 'True' | 'False';
  readonly reason: 'ConditionRuleEvaluated' | 'ConditionRuleExpressionError';
  readonly message: string;
}

/** Evaluates one CEL expression; a string error message when it fails. */
export function evaluateCel(expression: string, bindings: Record<string, unknown>): unknown {
  const result = run(expression, bindings as Record<string, CelInput>, { funcs: strings });
  if (isCelError(result)) return new Error(result.message);
  return result;
}

/** The condition status, reason and message the work agent derives from `rule` for the manifest `object`. */
export function evaluateConditionRule(rule: ConditionRule, object: Record<string, unknown>): RuleResult {
  let status: 'True' | 'False' = 'True';
  for (const expression of rule.celExpressions ?? []) {
    const value = evaluateCel(expression, { object });
    if (value instanceof Error)
      return { status: 'False', reason: 'ConditionRuleExpressionError', message: value.message };
    if (typeof value !== 'boolean')
      return { status: 'False', reason: 'ConditionRuleExpressionError', message: 'expected bool result' };
    if (!value) {
      status = 'False';
      break;
    }
  }
  let message = '';
  if (rule.messageExpression) {
    const value = evaluateCel(rule.messageExpression, { object, result: status === 'True' });
    message = value instanceof Error ? value.message : typeof value === 'string' ? value : 'expected a string';
  }
  if (!message) message = rule.message || `Manifest is ${status === 'True' ? '' : 'not '}${rule.condition}`;
  return { status, reason: 'ConditionRuleEvaluated', message };
}
