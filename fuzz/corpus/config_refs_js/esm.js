import acme from '@acme/eslint-config';
import rules from '#rules';
export default [...acme, rules];
