SELECT 'café';
